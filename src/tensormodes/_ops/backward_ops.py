"""PyTorch's backward ops of the element-wise activations and losses, as its gradient formulas call
them: ``gelu_backward``, ``silu_backward``, ``elu_backward``,
``leaky_relu_backward``, ``hardtanh_backward``, ``hardswish_backward``, ``hardsigmoid_backward``,
``softplus_backward``, ``log_sigmoid_backward``, ``logit_backward`` and ``mse_loss_backward``; and
``tanh_backward`` and ``sigmoid_backward`` (public as ``_tanh_backward`` and ``_sigmoid_backward``).
``mish_backward``, ``glu_backward`` and the other losses' are in ``backward_ops_nn.py``.

But for those two, none is a public function (``function=False``): they are reached as
``tensormodes.ops.aten.<name>.default``, which the forward ops' gradient formulas call, so a
``TorchDispatchMode`` (and ``make_fx``'s joint graphs) sees during backward the one op PyTorch's
backward sends, and the plain backward runs one NumPy kernel instead of a chain of small ops.
Each kernel computes PyTorch's CPU formula in its order: the operands broadcast and promote as
a TensorIterator's do, half types compute in float32 and are rounded once, and where PyTorch's
vectorised float32 loops fuse a multiply and an add (the compiler contracts them), the float32
kernel rounds the pair once too. Transcendental functions are computed in float64 and rounded
(the correctly rounded value, which PyTorch's vectorised functions give almost always).
Each op's own gradient (double backward) is written with public ops and the op itself, or, as
in PyTorch, raises (``silu_backward``, ``logit_backward``, ``hardsigmoid_backward``: PyTorch
differentiates ``silu`` and ``logit`` through composites with grad mode on, and those forward
formulas here do the same).

>>> import tensormodes as tm
>>> tm.ops.aten.silu_backward.default(tm.tensor([1.0]), tm.tensor([0.0]))
tensor([0.5000])
"""

from __future__ import annotations

import functools
import math
import threading
from numbers import Number

import numpy as np

from .. import _dtype as dt
from ._pointwise import BLOCK, _half_scalar_tail, _opmath, blockwise
from ._samples import BF16, F16, M23, SCALAR_F64
from ._vector_kernels import half_loop_exp
from .common import (
    HALF_TYPES,
    check_same_shape_or_broadcast,
    no_derivative,
    not_implemented,
    operand_dtype,
    ops,
    quiet,
    scalar_type_name,
)
from .common import conjugate as _conj
from .meta_rules import broadcasting, elementwise
from .registry import Sample, Tensor, TensorSpec, op
from .special import _half_gelu_erf, gelu_erf, half_gelu_exp

_F32 = np.dtype(np.float32)


def _operands(kernel: str, *arrays: np.ndarray):
    """The arrays broadcast and in the dtype to compute in, and the result's dtype: PyTorch's
    promotion of the operands, its error for a dtype without a kernel, float32 for half types."""
    result_type = arrays[0].dtype
    if any(a.dtype != result_type for a in arrays[1:]):
        result_type = operand_dtype(*arrays)._np
    if result_type.kind != "f" and result_type not in HALF_TYPES:
        raise not_implemented(kernel, dt.NP_TO_DTYPE[result_type])
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        shape = check_same_shape_or_broadcast(*(a.shape for a in arrays))
        arrays = tuple(np.broadcast_to(a, shape) for a in arrays)
    work = _F32 if result_type in HALF_TYPES else result_type
    return tuple(a.astype(work, copy=False) for a in arrays), result_type


def _finished(result: np.ndarray, result_type: np.dtype) -> np.ndarray:
    return np.asarray(np.asarray(result).astype(result_type, copy=False))


def _wide(ufunc, x: np.ndarray) -> np.ndarray:
    """``ufunc(x)``, a float32 ``x``'s computed in float64 and rounded once."""
    if x.dtype == _F32:
        return ufunc(x.astype(np.float64)).astype(_F32)
    return ufunc(x)


def _fma(a, b, c):
    """``a * b + c``, a float32 one rounded once (PyTorch's contracted multiply-add; the float64
    product of float32 numbers is exact). Other dtypes round both steps."""
    if getattr(a, "dtype", None) == _F32 or getattr(b, "dtype", None) == _F32:
        return (np.asarray(a, np.float64) * b + c).astype(_F32)
    return a * b + c


def _zero_like(t):
    return ops.zeros_like(t)


_ACTIVATION = TensorSpec((2, 3), "float32", -4, 4)
_GRAD = TensorSpec((2, 3))


def _activation_samples(*extra, low: float = -4, high: float = 4, broadcast: bool = True) -> tuple[Sample, ...]:
    """Samples of a ``(grad_output, input, *extra)`` backward op: float32, float64, 0-dim, empty,
    float16 and bfloat16 (computed in float32); unless not ``broadcast``, broadcasting and mixed
    dtypes (promoted)."""
    def spec(shape, dtype="float32"):
        return TensorSpec(shape, dtype, low, high)
    return (Sample((_GRAD, spec((2, 3)), *extra)),
            Sample((TensorSpec((3, 2), "float64"), spec((3, 2), "float64"), *extra)),
            *([Sample((TensorSpec((2, 3)), spec((3,)), *extra))] if broadcast else []),
            Sample((TensorSpec(()), spec(()), *extra)),
            Sample((TensorSpec((0, 3)), spec((0, 3)), *extra)),
            Sample((TensorSpec((4,), "float16"), spec((4,), "float16"), *extra)),
            Sample((TensorSpec((4,), "bfloat16"), spec((4,), "bfloat16"), *extra)),
            *([Sample((TensorSpec((4,), "float64"), spec((4,)), *extra))] if broadcast else []))


_INTEGER_ERROR = (Sample((TensorSpec((2,), "int64"), TensorSpec((2,), "int64"))),)


# -- tanh and sigmoid, given their results -------------------------------------------------------

def _tanh_backward_grad(grad, grad_output, output, needs_input_grad):
    # result = grad_output * (1 - conj(output) ** 2): linear in grad_output, antiholomorphic in
    # output (derivative -2 * grad_output * conj(output) with respect to conj(output)).
    return (ops._tanh_backward(grad, _conj(output)) if needs_input_grad[0] else None,
            _conj(grad) * grad_output * _conj(output) * -2 if needs_input_grad[1] else None)


@op(grad=_tanh_backward_grad, meta=elementwise, samples=(
    Sample((M23, TensorSpec((2, 3), "float32", -1, 1))),
    Sample((TensorSpec((3, 4), "float64"), TensorSpec((3, 4), "float64", -1, 1))),
    Sample((TensorSpec((3,), "complex64"), TensorSpec((3,), "complex64", -1, 1))),
    Sample((SCALAR_F64, SCALAR_F64)), Sample((BF16, BF16)), Sample((F16, F16))),
    aten="tanh_backward.default", tags=("pointwise",))
def _tanh_backward(grad_output: Tensor, output: Tensor) -> Tensor:
    """``grad_output * conj(1 - output ** 2)``: the gradient of ``tanh`` given its result (PyTorch's
    ``aten::tanh_backward``), half types computed in float32 and rounded once.

    >>> import tensormodes as tm
    >>> tm._tanh_backward(tm.tensor([1.0, 2.0]), tm.tensor([0.0, 0.5]))
    tensor([1.0000, 1.5000])
    """
    gradient, y, result_type = _backward_operands(grad_output, output)
    slope = 1 - y * y
    if y.dtype.kind == "c":
        slope = np.conj(slope)
    return np.asarray((gradient * slope).astype(result_type, copy=False))


def _backward_operands(grad_output: np.ndarray, output: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.dtype]:
    """A pointwise backward op's operands in the type it computes in (float32 for the half types),
    and its result's dtype (the operands' promoted one)."""
    result_type = grad_output.dtype if grad_output.dtype == output.dtype else operand_dtype(grad_output, output)._np
    work = _opmath(dt.NP_TO_DTYPE[result_type])._np
    return grad_output.astype(work, copy=False), output.astype(work, copy=False), result_type


def _sigmoid_backward_grad(grad, grad_output, output, needs_input_grad):
    # result = grad_output * conj((1 - output) * output): linear in grad_output; with respect to
    # conj(output), grad_output * (1 - 2 * conj(output)).
    return (ops._sigmoid_backward(grad, _conj(output)) if needs_input_grad[0] else None,
            _conj(grad) * grad_output * (1 - 2 * _conj(output)) if needs_input_grad[1] else None)


@op(grad=_sigmoid_backward_grad, meta=elementwise, samples=(
    Sample((M23, TensorSpec((2, 3), "float32", 0, 1))),
    Sample((TensorSpec((3, 4), "float64"), TensorSpec((3, 4), "float64", 0, 1))),
    Sample((TensorSpec((3,), "complex64"), TensorSpec((3,), "complex64", 0, 1))),
    Sample((SCALAR_F64, SCALAR_F64)), Sample((BF16, BF16)), Sample((F16, F16))),
    aten="sigmoid_backward.default", tags=("pointwise",))
def _sigmoid_backward(grad_output: Tensor, output: Tensor) -> Tensor:
    """``grad_output * conj((1 - output) * output)``: the gradient of ``sigmoid`` given its result
    (PyTorch's ``aten::sigmoid_backward``, multiplied in its order), half types computed in
    float32 and rounded once.

    >>> import tensormodes as tm
    >>> tm._sigmoid_backward(tm.tensor([1.0, 2.0]), tm.tensor([0.5, 0.25]))
    tensor([0.2500, 0.3750])
    """
    gradient, y, result_type = _backward_operands(grad_output, output)
    if result_type == np.float16:
        # PyTorch's float16 kernel computes in c10::Half, each operation rounded (bfloat16's in float32)
        one_minus = (1 - y).astype(np.float16).astype(np.float32)
        return np.asarray(((gradient * one_minus).astype(np.float16).astype(np.float32) * y).astype(np.float16))
    product = gradient * np.conj((1 - y) * y) if y.dtype.kind == "c" else gradient * (1 - y) * y
    return np.asarray(product.astype(result_type, copy=False))


# -- gelu, silu, mish ---------------------------------------------------------------------------------

_SQRT_HALF = math.sqrt(0.5)
_GELU_BETA = 2 / math.sqrt(math.pi) * math.sqrt(0.5) * 0.5  # 1 / sqrt(2 pi), as PyTorch spells it
_TANH_BETA = math.sqrt(2) * 2 / math.sqrt(math.pi) * 0.5  # sqrt(2 / pi)
_KAPPA = 0.044715


def _gelu_backward_grad(grad, grad_output, input, approximate, needs_input_grad):
    # grad_output * s(x), s = gelu's slope: linear in grad_output; s' for the input.
    grad_grad_output = grad_input = None
    if needs_input_grad[0]:
        grad_grad_output = ops.ops.aten.gelu_backward.default(grad, input, approximate=approximate)
    if needs_input_grad[1]:
        if approximate == "tanh":
            # s = (1 + t) / 2 + x (1 - t^2) u' / 2, t = tanh(u), u = beta (x + kappa x^3):
            # s' = (1 - t^2) (u' - x t u'^2 + 3 beta kappa x^2)
            square = input * input
            t = ((input + square * input * _KAPPA) * _TANH_BETA).tanh()
            inner = (square * (3 * _KAPPA) + 1) * _TANH_BETA
            slope = (1 - t * t) * (inner - input * t * inner * inner + square * (3 * _TANH_BETA * _KAPPA))
        else:
            # s = Phi(x) + x phi(x): s' = phi(x) (2 - x^2)
            slope = (input * input * -0.5).exp() * _GELU_BETA * (2 - input * input)
        grad_input = grad * grad_output * slope
    return grad_grad_output, grad_input


@op(function=False, grad=_gelu_backward_grad, meta=broadcasting("grad_output", "input"),
    # no broadcasting or mixed sample: PyTorch's oneDNN kernel refuses operands of different shapes or dtypes
    samples=_activation_samples(broadcast=False) + (Sample((_GRAD, _ACTIVATION), {"approximate": "tanh"}),
                                     Sample((TensorSpec((3,), "float64"), TensorSpec((3,), "float64", -5, 5)),
                                            {"approximate": "tanh"}),
                                     Sample((TensorSpec((3,), "bfloat16"), TensorSpec((3,), "bfloat16", -3, 3)),
                                            {"approximate": "tanh"})),
    errors=_INTEGER_ERROR + (Sample((_GRAD, _ACTIVATION), {"approximate": "fast"}),),
    schema={"input": "Tensor self"}, aten="default", tags=("pointwise",))
def gelu_backward(grad_output: Tensor, input: Tensor, *, approximate: str = "none") -> Tensor:
    """The gradient of ``gelu`` (PyTorch's ``aten::gelu_backward``): ``grad_output * (Phi(x) + x
    phi(x))``, or the slope of the tanh approximation.

    >>> import tensormodes as tm
    >>> tm.ops.aten.gelu_backward.default(tm.tensor([1.0, 1.0]), tm.tensor([0.0, 1.0]))
    tensor([0.5000, 1.0833])
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    (dy, x), result_type = _operands("GeluBackwardKernelImpl", grad_output, input)
    with quiet():  # 0 * inf at infinite x: NaN, as PyTorch's kernel gives
        if approximate == "tanh":
            result = _tanh_gelu_backward(dy, x)
            if result_type in HALF_TYPES:
                _saturate_half_tanh_gelu_backward(result, dy, x, _half_scalar_tail(x.shape, grad_output, input))
        elif grad_output.dtype == np.float16 and input.dtype == np.float16 and grad_output.flags.c_contiguous \
                and input.flags.c_contiguous:  # PyTorch's float16 vector steps: their own erf
            w = x.dtype.type
            cdf = w(0.5) * (w(1) + _half_gelu_erf(x * w(_SQRT_HALF)).astype(x.dtype, copy=False))
            pdf = w(_GELU_BETA) * half_gelu_exp(x * x * w(-0.5))
            result = dy * (cdf + x * pdf)
        else:  # erf of the whole array in one call (its fast path's fixed costs once), the rest in
            # blocks of float32 temporaries (erf and exp block their float64 ones)
            erf = gelu_erf(x)  # (the forward's, when it kept them for this input)
            result = _gelu_backward_over(dy, x, erf) if erf.flags.c_contiguous else \
                blockwise(_gelu_backward, dy, x, erf, block=2 * BLOCK)
    return _finished(result, result_type)


@functools.cache
def _tanh_gelu_constants(dtype: np.dtype) -> tuple:
    """beta in ``dtype``; kappa and 3 kappa (rounded to ``dtype``) as the float64 numbers of the
    multiply-adds' float64 steps."""
    w = dtype.type
    return w(_TANH_BETA), float(w(_KAPPA)), float(w(3) * w(_KAPPA))


def _saturate_half_tanh_gelu_backward(result: np.ndarray, dy: np.ndarray, x: np.ndarray, tail) -> None:
    """Where PyTorch's half-type vector steps (``tail``: its scalar loop's elements) take Sleef's
    tanh, which is +-1 beyond 8.664339742: the slope is then 1 (t = 1) or +0 (t = -1)."""
    beta, kappa, _ = _tanh_gelu_constants(x.dtype)
    inner = beta * ((x * x * x).astype(np.float64) * kappa + x).astype(x.dtype)  # beta fma(kappa, x^3, x)
    # (beyond about 9.01 a correctly rounded tanh is +-1 too, and the formula's infinities stay its own)
    saturated = (np.abs(inner) > x.dtype.type(8.664339742)) & (np.abs(inner) < 10)
    if tail is not None:
        saturated &= ~tail
    if saturated.any():
        result[saturated] = np.where(inner[saturated] > 0, dy[saturated], dy[saturated] * 0.0)


# Elements per block of the tanh GELU's backward (measured at (8, 32, 256) float32: 16,384 -> 32,768,
# -7 to -10 %: half the NumPy calls; 65,536 no faster, its float64 arrays past the L2 cache)
_TANH_GELU_BLOCK = 4 * BLOCK


class _TanhGeluWork(threading.local):
    """Each thread's work arrays for ``_tanh_gelu_backward``, by dtype, kept from call to call: made
    at every call, arrays of this size (~1.1 MiB together for float32) would be past the C heap's
    mmap threshold, their pages faulted in again each time (~2.7 us a 4 KiB page here)."""

    def __init__(self) -> None:
        self.by_dtype: dict[np.dtype, tuple[np.ndarray, ...]] = {}


_TANH_GELU_WORK = _TanhGeluWork()


def _tanh_gelu_backward(dy: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The tanh form's slope times ``dy`` (float32 or float64 operands of one shape), in PyTorch's
    steps: ``0.5 (1 + t) + 0.5 x (1 - t^2) u'``, ``t = tanh(beta fma(kappa, x^3, x))``, ``u' =
    beta fma(3 kappa, x^2, 1)``; for float32 the multiply-adds rounded once (their products exact
    in float64) and ``tanh`` computed in float64 and rounded.

    In blocks of ``_TANH_GELU_BLOCK`` elements, in place in this thread's work arrays (two float64
    ones, four of the operands' dtype), each block's result written into the result. The float64
    steps reach the values through copies into float64 arrays (a float32 array copied into a
    float64 one is widened exactly, copied back rounded once, as ``astype``; NumPy's mixed-dtype
    ufunc calls cost 2-3 same-dtype ones); for float64 operands those copies change nothing.
    27 passes a block, 9 of them float32 <-> float64 copies, and ``tanh`` in float64 the dearest
    (~0.75 ns an element, the others 0.06-0.14): what keeps it ~3x PyTorch's fused loop."""
    work = _TANH_GELU_WORK.by_dtype.get(x.dtype)
    if work is None:
        work = _TANH_GELU_WORK.by_dtype[x.dtype] = (
            np.empty(_TANH_GELU_BLOCK), np.empty(_TANH_GELU_BLOCK),
            *(np.empty(_TANH_GELU_BLOCK, x.dtype) for _ in range(4)))
    result = np.empty(x.shape, x.dtype)
    flat = tuple(a.reshape(-1) for a in (dy, x, result))
    for start in range(0, x.size, _TANH_GELU_BLOCK):
        dy_block, x_block, out = (a[start:start + _TANH_GELU_BLOCK] for a in flat)
        _tanh_gelu_backward_block(dy_block, x_block, out, *(a[:x_block.size] for a in work))
    return result


def _tanh_gelu_backward_block(dy: np.ndarray, x: np.ndarray, out: np.ndarray, wide: np.ndarray, other: np.ndarray,
                              square: np.ndarray, inner: np.ndarray, t: np.ndarray, right: np.ndarray) -> None:
    w = x.dtype.type
    beta, kappa, three_kappa = _tanh_gelu_constants(x.dtype)
    np.multiply(x, x, out=square)
    np.multiply(square, x, out=inner)
    np.copyto(wide, inner)  # fma(kappa, x^3, x)
    wide *= kappa
    np.copyto(other, x)
    wide += other
    np.copyto(inner, wide, casting="same_kind")
    inner *= beta
    np.copyto(wide, inner)  # t = tanh(...)
    np.tanh(wide, out=wide)
    np.copyto(t, wide, casting="same_kind")
    np.copyto(wide, t)  # fma(-t, t, 1) = 1 - t * t
    wide *= wide
    np.subtract(1.0, wide, out=wide)
    slope_of_right = inner
    np.copyto(slope_of_right, wide, casting="same_kind")
    np.copyto(wide, square)  # beta * fma(3 kappa, x^2, 1)
    wide *= three_kappa
    wide += 1.0
    inner_slope = square
    np.copyto(inner_slope, wide, casting="same_kind")
    inner_slope *= beta
    t += w(1)  # 0.5 (1 + t) + 0.5 x slope_of_right inner_slope
    t *= w(0.5)
    np.multiply(w(0.5), x, out=right)
    right *= slope_of_right
    right *= inner_slope
    t += right
    np.multiply(dy, t, out=out)


def _gelu_backward_over(dy: np.ndarray, x: np.ndarray, erf: np.ndarray) -> np.ndarray:
    """``_gelu_backward`` of same-shape operands in blocks (as ``blockwise``), each block's result
    left in ``erf`` (contiguous, the caller's to overwrite): no whole-array result beside it."""
    flat = tuple(a.reshape(-1) for a in (dy, x, erf))
    for start in range(0, erf.size, 2 * BLOCK):
        _gelu_backward(*(a[start:start + 2 * BLOCK] for a in flat))
    return erf


def _gelu_backward(dy: np.ndarray, x: np.ndarray, erf: np.ndarray) -> np.ndarray:
    # dy * (cdf + x * pdf), operands in that order, in two arrays (``erf``, erf(x / sqrt(2)), is
    # overwritten, and holds the result): fewer whole-array temporaries, which the C heap would
    # give back and fault in again at every call
    w = x.dtype.type
    cdf = np.add(w(1), erf, out=erf)
    np.multiply(w(0.5), cdf, out=cdf)
    pdf = np.multiply(x, x, out=np.empty_like(x))
    pdf *= w(-0.5)
    np.exp(pdf, out=pdf, dtype=np.float64)  # a float32's in float64, rounded once (as `_wide`)
    np.multiply(w(_GELU_BETA), pdf, out=pdf)
    np.multiply(x, pdf, out=pdf)
    np.add(cdf, pdf, out=pdf)
    return np.multiply(dy, pdf, out=cdf)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    w = x.dtype.type
    with quiet():  # exp(-x) overflows to inf for very negative x: sigmoid is then 0
        return w(1) / (w(1) + _wide(np.exp, -x))


# PyTorch differentiates silu through a composite with grad mode on, and never this op
@op(function=False, grad=no_derivative("silu_backward"), meta=broadcasting("grad_output", "input"),
    samples=_activation_samples(), errors=_INTEGER_ERROR, schema={"input": "Tensor self"}, aten="default",
    tags=("pointwise",))
def silu_backward(grad_output: Tensor, input: Tensor) -> Tensor:
    """The gradient of ``silu`` (PyTorch's ``aten::silu_backward``): ``grad_output * sigmoid(x) *
    (1 + x * (1 - sigmoid(x)))``.

    >>> import tensormodes as tm
    >>> tm.ops.aten.silu_backward.default(tm.tensor([1.0, 2.0]), tm.tensor([0.0, 0.0]))
    tensor([0.5000, 1.0000])
    """
    (dy, x), result_type = _operands("silu_backward_cpu", grad_output, input)
    w = x.dtype.type
    if result_type in HALF_TYPES:  # PyTorch's half kernel: float32, its loop's exp, rounded once
        with quiet():
            negated = np.broadcast_to(-input, x.shape) if input.dtype == result_type else -x  # (tables for halves)
            sigmoid = w(1) / (w(1) + half_loop_exp(negated, _half_scalar_tail(x.shape, grad_output, input)))
    else:
        sigmoid = _sigmoid(x)
    with quiet():  # inf * 0 at infinite x: NaN, as PyTorch's kernel gives
        return _finished(dy * sigmoid * _fma(x, w(1) - sigmoid, w(1)), result_type)


# -- piecewise activations ------------------------------------------------------------------------------

def _leaky_relu_backward_grad(grad, input, negative_slope, self_is_result, needs_input_grad):
    # A mask of grad_output: linear there (grad_output is not saved, as by PyTorch's node), constant in input.
    return (ops.ops.aten.leaky_relu_backward.default(grad, input, negative_slope, self_is_result)
            if needs_input_grad[0] else None, _zero_like(input) if needs_input_grad[1] else None)


@op(function=False, grad=_leaky_relu_backward_grad, meta=broadcasting("grad_output", "input"),
    samples=_activation_samples(0.01, False) + (Sample((_GRAD, _ACTIVATION, 0.2, True)),),
    errors=(Sample((TensorSpec((2,), "int64"), TensorSpec((2,), "int64"), 0.1, False)),),
    schema={"input": "Tensor self", "negative_slope": "Scalar"}, aten="default")
def leaky_relu_backward(grad_output: Tensor, input: Tensor, negative_slope: Number, self_is_result: bool) -> Tensor:
    """The gradient of ``leaky_relu`` (PyTorch's ``aten::leaky_relu_backward``): ``grad_output``
    where ``input > 0``, ``grad_output * negative_slope`` elsewhere (also at NaN).

    >>> import tensormodes as tm
    >>> tm.ops.aten.leaky_relu_backward.default(tm.tensor([2.0, 2.0]), tm.tensor([-1.0, 1.0]), 0.5, False)
    tensor([1., 2.])
    """
    if self_is_result and negative_slope < 0:
        raise RuntimeError("In-place leakyReLu backward calculation is triggered with a negative slope which is not "
                           "supported. This is caused by calling in-place forward function with a negative slope, "
                           "please call out-of-place version instead. File an issue at "
                           "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
                           "backward calculation with negative slope")
    (dy, x), result_type = _operands("leaky_relu_backward_cpu", grad_output, input)
    with quiet():  # inf * 0: NaN, as PyTorch's kernel (it computes both branches)
        return _finished(np.where(x > 0, dy, dy * x.dtype.type(negative_slope)), result_type)


def _elu_backward_grad(grad, grad_output, alpha, scale, input_scale, is_result, self_or_result, needs_input_grad):
    # grad_output * s: s = scale above 0, else alpha * scale * input_scale * exp(x * input_scale)
    # (of the result r: input_scale * (r + alpha * scale)).
    grad_grad_output = grad_input = None
    if needs_input_grad[0]:
        grad_grad_output = ops.ops.aten.elu_backward.default(grad, alpha, scale, input_scale, is_result,
                                                             self_or_result)
    if needs_input_grad[1]:
        if is_result:
            grad_input = grad * grad_output * input_scale
        else:
            grad_input = grad * grad_output * (self_or_result * input_scale).exp() * (
                alpha * scale * input_scale * input_scale)
        grad_input = grad_input.masked_fill(self_or_result > 0, 0)
    return grad_grad_output, grad_input


@op(function=False, grad=_elu_backward_grad, meta=broadcasting("grad_output", "self_or_result"),
    samples=(Sample((_GRAD, 1.0, 1.0, 1.0, False, _ACTIVATION)),
             Sample((TensorSpec((3, 2), "float64"), 0.5, 2.0, 1.5, False, TensorSpec((3, 2), "float64", -4, 4))),
             Sample((_GRAD, 1.6732632423543772, 1.0507009873554805, 1.0, True, TensorSpec((2, 3), "float32", -1.5, 4))),
             Sample((TensorSpec(()), 1.0, 1.0, 1.0, False, TensorSpec((), "float32", -2, 2))),
             Sample((TensorSpec((0, 3)), 1.0, 1.0, 1.0, False, TensorSpec((0, 3)))),
             Sample((TensorSpec((2, 3)), 2.0, 1.0, 0.5, False, TensorSpec((3,), "float32", -3, 3))),
             Sample((TensorSpec((4,), "bfloat16"), 1.0, 1.0, 1.0, False, TensorSpec((4,), "bfloat16", -3, 3))),
             Sample((TensorSpec((4,), "float16"), 1.0, 1.0, 1.0, False, TensorSpec((4,), "float16", -3, 3)))),
    errors=(Sample((TensorSpec((2,), "int64"), 1.0, 1.0, 1.0, False, TensorSpec((2,), "int64"))),
            Sample((_GRAD, -1.0, 1.0, 1.0, True, _ACTIVATION))),
    schema={"alpha": "Scalar", "scale": "Scalar", "input_scale": "Scalar"}, aten="default")
def elu_backward(grad_output: Tensor, alpha: Number, scale: Number, input_scale: Number, is_result: bool,
                 self_or_result: Tensor) -> Tensor:
    """The gradient of ``elu`` (and ``selu``, ``celu``; PyTorch's ``aten::elu_backward``), given its
    input, or its result when ``is_result`` (an in-place forward): ``grad_output * scale`` above 0,
    ``grad_output * input_scale * alpha * scale * exp(x * input_scale)`` (of the result:
    ``grad_output * input_scale * (result + alpha * scale)``) elsewhere.

    >>> import tensormodes as tm
    >>> tm.ops.aten.elu_backward.default(tm.tensor([1.0, 1.0]), 1.0, 1.0, 1.0, False, tm.tensor([0.0, 2.0]))
    tensor([1., 1.])
    """
    if is_result and alpha < 0:
        raise RuntimeError("In-place elu backward calculation is triggered with a negative slope which is not "
                           "supported. This is caused by calling in-place forward function with a negative slope, "
                           "please call out-of-place version instead.")
    (dy, x), result_type = _operands("elu_backward_cpu", grad_output, self_or_result)
    w = x.dtype.type
    negcoef, poscoef, negiptcoef = w(alpha * scale), w(scale), w(input_scale)
    with quiet():  # the branch not taken may overflow
        if is_result:
            negative = dy * negiptcoef * (x + negcoef)
        else:
            negative = dy * negiptcoef * negcoef * _wide(np.exp, x * negiptcoef)
        return _finished(np.where(x <= 0, negative, dy * poscoef), result_type)


def _hardtanh_backward_grad(grad, input, min_val, max_val, needs_input_grad):
    # grad_output is not saved (the op is linear in it), as by PyTorch's node
    return (ops.ops.aten.hardtanh_backward.default(grad, input, min_val, max_val) if needs_input_grad[0] else None,
            _zero_like(input) if needs_input_grad[1] else None)


@op(function=False, grad=_hardtanh_backward_grad, meta=broadcasting("grad_output", "input"),
    samples=_activation_samples(-1.0, 1.0, low=-2, high=2) + (Sample((_GRAD, _ACTIVATION, 0.0, 6.0)),),
    errors=(Sample((TensorSpec((2,), "int64"), TensorSpec((2,), "int64"), -1, 1)),),
    schema={"input": "Tensor self", "min_val": "Scalar", "max_val": "Scalar"}, aten="default")
def hardtanh_backward(grad_output: Tensor, input: Tensor, min_val: Number, max_val: Number) -> Tensor:
    """The gradient of ``hardtanh`` (PyTorch's ``aten::hardtanh_backward``): 0 at and beyond the
    bounds, ``grad_output`` between them (and at NaN).

    >>> import tensormodes as tm
    >>> tm.ops.aten.hardtanh_backward.default(tm.tensor([2.0, 2.0]), tm.tensor([-1.0, 0.5]), -1.0, 1.0)
    tensor([0., 2.])
    """
    (dy, x), result_type = _operands("hardshrink_backward_cpu", grad_output, input)
    w = x.dtype.type
    return _finished(np.where((x <= w(min_val)) | (x >= w(max_val)), w(0), dy), result_type)


def _hardswish_backward_grad(grad, grad_output, input, needs_input_grad):
    # s = x / 3 + 1/2 strictly between -3 and 3: s' = 1/3 there
    grad_grad_output = grad_input = None
    if needs_input_grad[0]:
        grad_grad_output = ops.ops.aten.hardswish_backward.default(grad, input)
    if needs_input_grad[1]:
        grad_input = (grad * grad_output / 3).masked_fill((input <= -3) | (input >= 3), 0)
    return grad_grad_output, grad_input


@op(function=False, grad=_hardswish_backward_grad, meta=broadcasting("grad_output", "input"),
    samples=_activation_samples(low=-5, high=5), errors=_INTEGER_ERROR, schema={"input": "Tensor self"},
    aten="default")
def hardswish_backward(grad_output: Tensor, input: Tensor) -> Tensor:
    """The gradient of ``hardswish`` (PyTorch's ``aten::hardswish_backward``): 0 up to -3
    (included), ``grad_output * (x / 3 + 1/2)`` below 3, ``grad_output`` from 3 on (and at NaN).

    >>> import tensormodes as tm
    >>> tm.ops.aten.hardswish_backward.default(tm.ones(3), tm.tensor([-4.0, 0.0, 3.0]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    (dy, x), result_type = _operands("hardswish_backward_cpu", grad_output, input)
    w = x.dtype.type
    return _finished(np.where(x <= w(-3), w(0), np.where(x < w(3), dy * (x / w(3) + w(0.5)), dy)), result_type)


# PyTorch's hardsigmoid_backward multiplies by 1/6 rounded to float32, also for float64
_ONE_SIXTH_AS_FLOAT32 = float(np.float32(1 / 6))


@op(function=False, grad=no_derivative("hardsigmoid_backward"), meta=broadcasting("grad_output", "input"),
    samples=_activation_samples(low=-5, high=5), errors=_INTEGER_ERROR, schema={"input": "Tensor self"},
    aten="default")
def hardsigmoid_backward(grad_output: Tensor, input: Tensor) -> Tensor:
    """The gradient of ``hardsigmoid`` (PyTorch's ``aten::hardsigmoid_backward``): ``grad_output /
    6`` strictly between -3 and 3, else 0 (also at NaN).

    >>> import tensormodes as tm
    >>> tm.ops.aten.hardsigmoid_backward.default(tm.tensor([6.0, 6.0]), tm.tensor([0.0, 3.0]))
    tensor([1., 0.])
    """
    (dy, x), result_type = _operands("hardsigmoid_backward", grad_output, input)
    w = x.dtype.type
    return _finished(np.where((x > w(-3)) & (x < w(3)), dy * w(_ONE_SIXTH_AS_FLOAT32), w(0)), result_type)


# -- softplus, log_sigmoid, logit -------------------------------------------------------------------

def _softplus_backward_grad(grad, grad_output, input, beta, threshold, needs_input_grad):
    # s = sigmoid(beta x) up to the threshold, 1 beyond: s' = beta s (1 - s) below it
    grad_grad_output = grad_input = None
    if needs_input_grad[0]:
        grad_grad_output = ops.ops.aten.softplus_backward.default(grad, input, beta, threshold)
    if needs_input_grad[1]:
        scaled = input * beta
        sigmoid = scaled.sigmoid()
        grad_input = (grad * grad_output * sigmoid * (1 - sigmoid) * beta).masked_fill(scaled > threshold, 0)
    return grad_grad_output, grad_input


@op(function=False, grad=_softplus_backward_grad, meta=broadcasting("grad_output", "input"),
    samples=_activation_samples(1.0, 20.0) + (Sample((_GRAD, _ACTIVATION, 2.0, 3.0)),
                                             Sample((_GRAD, _ACTIVATION, 0.5, 20.0))),
    errors=(Sample((TensorSpec((2,), "int64"), TensorSpec((2,), "int64"), 1.0, 20.0)),),
    schema={"input": "Tensor self", "beta": "Scalar", "threshold": "Scalar"}, aten="default")
def softplus_backward(grad_output: Tensor, input: Tensor, beta: Number, threshold: Number) -> Tensor:
    """The gradient of ``softplus`` (PyTorch's ``aten::softplus_backward``): ``grad_output * z / (z +
    1)`` with ``z = exp(x * beta)``, and ``grad_output`` where ``x * beta > threshold``.

    >>> import tensormodes as tm
    >>> tm.ops.aten.softplus_backward.default(tm.tensor([1.0, 1.0]), tm.tensor([0.0, 30.0]), 1.0, 20.0)
    tensor([0.5000, 1.0000])
    """
    (dy, x), result_type = _operands("softplus_backward_cpu", grad_output, input)
    w = x.dtype.type
    scaled = x * w(beta)
    with quiet():  # the branch not taken may overflow
        z = _wide(np.exp, scaled)
        return _finished(np.where(scaled > w(threshold), dy, dy * z / (z + w(1))), result_type)


def _log_sigmoid_backward_grad(grad, grad_output, input, buffer, needs_input_grad):
    # s = sigmoid(-x) (the buffer is exp(-|x|), of the input: no gradient): s' = -sigmoid(x) sigmoid(-x)
    grad_grad_output = grad_input = None
    if needs_input_grad[0]:
        grad_grad_output = ops.ops.aten.log_sigmoid_backward.default(grad, input, buffer)
    if needs_input_grad[1]:
        grad_input = -(grad * grad_output * input.sigmoid() * (-input).sigmoid())
    return grad_grad_output, grad_input, None


@op(function=False, grad=_log_sigmoid_backward_grad, meta=broadcasting("grad_output", "input", "buffer"),
    samples=(Sample((_GRAD, _ACTIVATION, TensorSpec((2, 3), "float32", 0, 1))),
             Sample((TensorSpec((3,), "float64"), TensorSpec((3,), "float64", -40, 40),
                     TensorSpec((3,), "float64", 0, 1))),
             Sample((TensorSpec(()), TensorSpec(()), TensorSpec((), "float32", 0, 1))),
             Sample((TensorSpec((4,), "bfloat16"), TensorSpec((4,), "bfloat16", -3, 3),
                     TensorSpec((4,), "bfloat16", 0, 1)))),
    errors=(Sample((TensorSpec((2,), "int64"), TensorSpec((2,), "int64"), TensorSpec((2,), "int64"))),),
    schema={"input": "Tensor self"}, aten="default")
def log_sigmoid_backward(grad_output: Tensor, input: Tensor, buffer: Tensor) -> Tensor:
    """The gradient of ``log_sigmoid`` (PyTorch's ``aten::log_sigmoid_backward``), given
    ``log_sigmoid_forward``'s buffer ``z = exp(-|x|)``: ``grad_output * (1 - z / (1 + z))`` where
    ``x < 0``, ``grad_output * z / (1 + z)`` elsewhere.

    >>> import tensormodes as tm
    >>> tm.ops.aten.log_sigmoid_backward.default(tm.tensor([1.0]), tm.tensor([0.0]), tm.tensor([1.0]))
    tensor([0.5000])
    """
    (dy, x, z), result_type = _operands("log_sigmoid_backward_cpu", grad_output, input, buffer)
    w = x.dtype.type
    negative = x < w(0)
    with quiet():
        share = z / (w(1) + z)
        return _finished(dy * np.where(negative, w(1) - share, share), result_type)


# PyTorch differentiates logit through a composite with grad mode on, and never this op
@op(function=False, grad=no_derivative("logit_backward"), meta=broadcasting("grad_output", "input"),
    samples=_activation_samples(low=0.05, high=0.95) + (
        Sample((_GRAD, TensorSpec((2, 3), "float32", 0.05, 0.95), 0.2)),
        Sample((_GRAD, TensorSpec((2, 3), "float64", -0.5, 1.5), 0.1)),
        Sample((_GRAD, TensorSpec((2, 3), "float32", 0.05, 0.95), -1.0))),
    errors=_INTEGER_ERROR, schema={"input": "Tensor self"}, aten="default", tags=("pointwise",))
def logit_backward(grad_output: Tensor, input: Tensor, eps: float | None = None) -> Tensor:
    """The gradient of ``logit`` (PyTorch's ``aten::logit_backward``): ``grad_output / (x (1 - x))``;
    outside ``[eps, 1 - eps]`` 0, or without ``eps`` (or a negative one) NaN outside ``[0, 1]``.

    >>> import tensormodes as tm
    >>> tm.ops.aten.logit_backward.default(tm.tensor([1.0, 1.0]), tm.tensor([0.5, 2.0]))
    tensor([4., nan])
    """
    (dy, x), result_type = _operands("logit_backward_cpu", grad_output, input)
    w = x.dtype.type
    with quiet():
        if result_type in (np.float16, dt.bfloat16._np):
            # PyTorch's kernel computes in the half type itself, each operation rounded
            def rounded(values):
                return values.astype(result_type).astype(x.dtype)
            result = dy / rounded(x * rounded(w(1) - x))
        else:
            result = dy / (x * (w(1) - x))
        if eps is None or eps < 0:
            result = np.where((x < w(0)) | (x > w(1)), w(np.nan), result)
        else:
            result = np.where((x < w(eps)) | (x > w(1 - eps)), w(0), result)
    return _finished(result, result_type)


# -- losses -------------------------------------------------------------------------------------------

REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}  # ATen's enum, as its backward ops take the reduction


def _mse_loss_backward_grad(grad, grad_output, input, target, reduction, needs_input_grad):
    # result = norm * (input - target) * grad_output, norm = 2 / input.numel() for 'mean', else 2
    norm = 2 / input.numel() if reduction == 1 else 2
    scaled = grad * norm
    return (scaled * (input - target) if needs_input_grad[0] else None,
            scaled * grad_output if needs_input_grad[1] else None,
            -(scaled * grad_output) if needs_input_grad[2] else None)


_LOSS_GRAD = TensorSpec(())


@op(function=False, grad=_mse_loss_backward_grad, meta=broadcasting("input", "target", "grad_output"),
    samples=(Sample((_LOSS_GRAD, TensorSpec((2, 3)), TensorSpec((2, 3)), 1)),
             Sample((TensorSpec((), "float64"), TensorSpec((3, 4), "float64"), TensorSpec((3, 4), "float64"), 2)),
             Sample((TensorSpec((2, 3)), TensorSpec((2, 3)), TensorSpec((2, 3)), 0)),
             Sample((_LOSS_GRAD, TensorSpec(()), TensorSpec(()), 1)),
             Sample((_LOSS_GRAD, TensorSpec((0, 3)), TensorSpec((0, 3)), 2)),
             Sample((TensorSpec((), "float16"), TensorSpec((4,), "float16"), TensorSpec((4,), "float16"), 1)),
             Sample((TensorSpec((4,), "bfloat16"), TensorSpec((4,), "bfloat16"), TensorSpec((4,), "bfloat16"), 0)),
             Sample((_LOSS_GRAD, TensorSpec((2, 3)), TensorSpec((2, 3), "float64"), 1))),
    errors=(Sample((_LOSS_GRAD, TensorSpec((2, 3)), TensorSpec((3, 2)), 1)),),
    schema={"input": "Tensor self"}, aten="default")
def mse_loss_backward(grad_output: Tensor, input: Tensor, target: Tensor, reduction: int) -> Tensor:
    """The gradient of ``mse_loss`` for ``input`` (PyTorch's ``aten::mse_loss_backward``, and for the
    target with ``input`` and ``target`` swapped): ``norm * (input - target) * grad_output``, ``norm``
    being ``2 / input.numel()`` for a mean (``reduction`` 1), else 2, in the operands' dtype (half
    types round each step, as PyTorch's half-type kernel computes in c10's half arithmetic).

    >>> import tensormodes as tm
    >>> tm.ops.aten.mse_loss_backward.default(tm.tensor(1.0), tm.tensor([1.0, 2.0]), tm.tensor([0.0, 0.0]), 1)
    tensor([1., 2.])
    """
    if input.dtype == target.dtype == grad_output.dtype:  # the common case: no promotion to work out
        compute = dt.NP_TO_DTYPE[input.dtype]
    else:
        compute = operand_dtype(input, target, grad_output)
    if compute._np.kind in "bc":
        raise not_implemented("mse_backward_cpu", compute)
    # the result is written into zeros like the input: computed in the operands' common dtype, cast
    if compute.is_floating_point and input.dtype.kind in "biu":
        raise RuntimeError(f"result type {scalar_type_name(compute)} can't be cast to the desired output type "
                           f"{scalar_type_name(dt.NP_TO_DTYPE[input.dtype])}")
    shape = check_same_shape_or_broadcast(input.shape, target.shape, grad_output.shape)
    norm = 2.0 / input.size if reduction == 1 and input.size else 2.0
    if reduction == 1 and not input.size:
        norm = math.inf
    a, b, c = (x.astype(compute._np, copy=False) for x in (input, target, grad_output))
    with quiet():  # integer types: norm truncated as PyTorch's cast does; half types step by step
        alpha = np.asarray(norm).astype(compute._np)
        result = alpha * (a - b) * c
    if result.shape == shape and result.dtype == input.dtype:
        return np.asarray(result)  # fresh: no copy needed
    return np.array(np.broadcast_to(result, shape), dtype=input.dtype)
