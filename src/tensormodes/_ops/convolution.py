"""Convolutions: ``convolution`` (ATen's general op, plain or transposed), and ``conv1d`` /
``conv2d``, which PyTorch exposes both as ``torch.conv2d`` and as ``torch.nn.functional.conv2d``
(one builtin: ``F.conv2d is torch.conv2d``).

Three NumPy kernels do every convolution, each an im2col and one batched matrix product (see
*kernels* below): the plain convolution, its transpose (the input's gradient and the transposed
convolution), and the weight's gradient. Every gradient is one call to
``_convolution_backward`` (ATen's ``convolution_backward``), whose own gradient is written with
convolutions and itself, so gradients of every order work.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from ._im2col import _correlate, _Layout, _spread, _weight_product, _working
from .common import HALF_TYPES, array_type_name, cpp_type_name, not_implemented, ops, scalar_type_name
from .common import conjugate as _conj
from .dispatch_forms import conv_decomposition
from .meta_rules import MetaRule, rule
from .registry import Sample, Tensor, TensorSpec, op

# float16 and bfloat16 are computed in float32 and cast back: NumPy's contractions of them are
# slow or missing.


# -- argument checks -----------------------------------------------------------------------------
#
# PyTorch checks a convolution in three stages, and the tensormodes checks follow them in order:
# the Python-facing functions (``conv2d``'s bias dtype, the input's dimensions, complex operands'
# types), then ATen's ``_convolution`` (the arguments and shapes of ``check_shape_forward``),
# then the CPU backend ATen picks (``_select_conv_backend``), each with checks and dtypes of its
# own: ``empty`` (no batch or no channels: computed as a product, so dtypes promote), ``mkldnn``
# (oneDNN: float32 work of some size, bfloat16), and the "slow" im2col kernels ``plain``,
# ``dilated`` and ``transposed``. Their choice and errors are reproduced, not their arithmetic.

def _expand(name: str, value, spatial: int) -> tuple[int, ...]:
    """An int or a list of ints (one, or one per spatial dimension) as one int per dimension."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value),) * spatial
    values = [int(v) for v in value]
    if len(values) == 1:
        return tuple(values) * spatial
    if len(values) != spatial:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {spatial} values to match "
                           f"the convolution dimensions, but got {name}={values}")
    return tuple(values)


# Tensor.toString() in PyTorch's messages: the legacy type names where they exist.
_LEGACY_TENSOR_NAMES = {dt.uint8: "Byte", dt.int8: "Char", dt.int16: "Short", dt.int32: "Int", dt.int64: "Long",
                        dt.float16: "Half", dt.float32: "Float", dt.float64: "Double"}


def _tensor_type(array) -> str:
    dtype = dt.NP_TO_DTYPE[array.dtype]
    legacy = _LEGACY_TENSOR_NAMES.get(dtype)
    return f"torch.{legacy}Tensor" if legacy else f"CPU{scalar_type_name(dtype)}Type"


def _check_same_type(input, weight, bias, mkldnn: bool = False) -> None:
    """ATen's ``check_input_same_type_as_parameters`` (complex convolutions; oneDNN's words)."""
    for name, parameter in (("weight", weight), ("bias", bias)):
        if parameter is not None and parameter.dtype != input.dtype:
            alternative = (f" or input should be a MKLDNN tensor and {name} is a dense tensor" if mkldnn else "")
            raise RuntimeError(f"Input type ({_tensor_type(input)}) and {name} type ({_tensor_type(parameter)}) should "
                               f"be the same{alternative}")


def _check_bias_dtype(input, bias) -> None:
    """``conv1d`` / ``conv2d``'s own check (with int padding): the bias of the input's dtype."""
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(f"Input type ({cpp_type_name(dt.NP_TO_DTYPE[input.dtype])}) and bias type "
                           f"({cpp_type_name(dt.NP_TO_DTYPE[bias.dtype])}) should be the same")


class _Plan:
    """A checked convolution: its arguments as one int per spatial dimension, the backend
    PyTorch's CPU dispatch picks, and the result's dtype and shape."""

    __slots__ = ("stride", "padding", "dilation", "output_padding", "backend", "dtype", "shape")

    def __init__(self, stride, padding, dilation, output_padding, backend, dtype, shape):
        self.stride, self.padding, self.dilation, self.output_padding = stride, padding, dilation, output_padding
        self.backend, self.dtype, self.shape = backend, dtype, shape


def _check_arguments(input, weight, bias, stride, padding, dilation, groups: int, transposed: bool = False,
                     output_padding=(0,), allow_complex: bool = True, extra=None) -> _Plan:
    """PyTorch's checks of a batched convolution's arguments, in its order (ATen's
    ``_convolution``, then its backend's), and the plan they leave. ``extra``: padding after the
    input beyond ``padding`` ('same' padding's odd one), which PyTorch pads before its checks."""
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    spatial = weight.ndim - 2
    stride = _expand("stride", stride, spatial)
    padding = _expand("padding", padding, spatial)
    dilation = _expand("dilation", dilation, spatial)
    output_padding = _expand("output_padding", output_padding, spatial)
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if input.ndim != weight.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                           f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size "
                           f"{list(input.shape)} instead")
    if weight.shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {list(weight.shape)} instead")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{list(weight.shape)}] instead")
    extra = tuple(extra or (0,) * spatial)
    sizes = [size + e for size, e in zip(input.shape[2:], extra)]  # the input as PyTorch pads it for 'same'
    if transposed:
        if input.shape[1] != weight.shape[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
                               f"{list(input.shape)} to have {weight.shape[0]} channels, but got {input.shape[1]} "
                               f"channels instead")
        out_channels = weight.shape[1] * groups
        _check_bias_shape(bias, weight, out_channels, transposed)
        out_sizes = _transposed_sizes(sizes, weight.shape, stride, padding, dilation, output_padding)
    else:
        if input.shape[1] != weight.shape[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                               f"{list(input.shape)} to have {weight.shape[1] * groups} channels, but got "
                               f"{input.shape[1]} channels instead")
        out_channels = weight.shape[0]
        _check_bias_shape(bias, weight, out_channels, transposed)
        padded = [size + 2 * p for size, p in zip(sizes, padding)]
        kernel = [d * (k - 1) + 1 for k, d in zip(weight.shape[2:], dilation)]
        if any(k > size for k, size in zip(kernel, padded)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                               f"size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater than actual "
                               f"input size")
        out_sizes = [(size - k) // s + 1 for size, k, s in zip(padded, kernel, stride)]
    arguments = (stride, padding, dilation, output_padding)
    backend, dtype = _check_backend(input, weight, bias, sizes, out_sizes, out_channels, arguments, groups,
                                    transposed, allow_complex)
    if backend == "empty" and input.shape[1] == 0:
        out_channels = 0  # ATen's empty path keeps the input's (zero) channels
    return _Plan(stride, padding, dilation, output_padding, backend, dtype,
                 (input.shape[0], out_channels, *out_sizes))


def _check_bias_shape(bias, weight, out_channels: int, transposed: bool) -> None:
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_channels):
        given = "Given transposed=1, weight" if transposed else "Given weight"
        raise RuntimeError(f"{given} of size {list(weight.shape)}, expected bias to be 1-dimensional with "
                           f"{out_channels} elements, but got bias of size {list(bias.shape)} instead")


def _as_2d(values, fill: int) -> tuple:
    """A 1D convolution's per-dimension values as PyTorch's 2D view of it has them (height first)."""
    return (fill, *values) if len(values) == 1 else tuple(values)


def _uses_mkldnn(dtype, shape, kernel, groups: int, transposed: bool, stride, output_padding) -> bool:
    """Whether ATen's CPU convolution takes oneDNN (``ConvParams::use_mkldnn``) for a non-empty
    batched input of 2D ``shape`` (a 1D one seen as height 1). Its float32 heuristic also looks
    at the number of threads for 1x1 kernels; more than one (any multi-core machine) is assumed.
    bfloat16 takes it on CPUs with native bfloat16 support (AVX-512), float16 only on CPUs with
    native float16 arithmetic (not assumed)."""
    if transposed and any(o >= s for o, s in zip(output_padding, stride)):
        return False
    if dtype == dt.bfloat16._np:
        return True
    if dtype != np.float32:
        return False
    return groups > 1 or (kernel[0] > 3 and kernel[1] > 3) or shape[0] > 1 or math.prod(shape) > 20480


# The dtypes of the slow kernels other than the plain one's (everything but bool and complex).
_SLOW_DTYPES = frozenset(np.dtype(d) for d in (np.float16, dt.bfloat16._np, np.float32, np.float64, np.int64))
_SLOW_KERNEL_NAMES = {"plain": "slow_conv2d_cpu", "dilated": "slow_conv_dilated<>",
                      "transposed": "slow_conv_transpose2d_out_cpu"}


def _check_backend(input, weight, bias, sizes, out_sizes, out_channels: int, arguments, groups: int,
                   transposed: bool, allow_complex: bool):
    """The CPU backend ATen selects for a checked convolution, after that backend's own checks,
    and the result's NumPy dtype."""
    stride, padding, dilation, output_padding = arguments
    shape = _as_2d(sizes, 1)
    shape = (*input.shape[:2], *shape)
    kernel = _as_2d(weight.shape[2:], 1)
    if input.shape[0] == 0 or input.shape[1] == 0:
        return "empty", _empty_dtype(input, weight, bias, out_sizes, out_channels)
    if math.prod(shape) == 0:
        raise RuntimeError(f"Only zero batch or zero channel inputs are supported, but got input shape: {list(shape)}")
    # a complex input reaches ATen as its real parts (conv1d / conv2d / the transposed ones split it)
    dtype = input.real.dtype if allow_complex and input.dtype.kind == "c" else input.dtype
    stride, dilation = _as_2d(stride, 1), _as_2d(dilation, 1)
    output_padding = _as_2d(output_padding, 0)
    if _uses_mkldnn(dtype, shape, kernel, groups, transposed, stride, output_padding):
        _check_same_type(input, weight, bias, mkldnn=True)
        if not transposed and any(d <= 0 for d in dilation):
            raise RuntimeError("non-positive dilation is not supported")
        if any(size < 0 for size in out_sizes):  # (an empty output is made and convolved)
            raise RuntimeError("could not construct a memory descriptor using a format tag")
        if weight.size == 0 or any(d <= 0 < k - 1 for d, k in zip(dilation, kernel)):
            raise RuntimeError(f"could not create a primitive descriptor for the {'de' if transposed else ''}"
                               f"convolution forward propagation primitive. Run workload with environment variable "
                               f"ONEDNN_VERBOSE=all to get additional diagnostic information.")
        return "mkldnn", input.dtype
    backend = "transposed" if transposed else "dilated" if any(d != 1 for d in dilation) else "plain"
    if backend == "dilated":
        if any(k <= 0 for k in kernel):
            raise RuntimeError(f"kernel size should be greater than zero, but got {list(kernel)}")
        if any(d <= 0 for d in dilation):
            raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    elif any(k <= 0 for k in kernel):
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {kernel[0]} "
                           f"kernel_width: {kernel[1]}")
    if transposed:
        _check_slow_transposed(input, weight, out_sizes, groups, stride, dilation, output_padding)
    if dtype.kind in "bc" or (backend != "plain" and dtype not in _SLOW_DTYPES):
        raise not_implemented(_SLOW_KERNEL_NAMES[backend], dt.NP_TO_DTYPE[dtype])
    if weight.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {array_type_name(input)} but found {array_type_name(weight)}")
    if transposed and bias is not None:
        if len(sizes) == 3 and bias.dtype != input.dtype:  # slow_conv_transpose3d reads it as the input's type
            raise RuntimeError(f"expected scalar type {array_type_name(input)} but found {array_type_name(bias)}")
        # the transposed kernel adds the bias in place: no lower category
        _check_written(dt.result_dtype((input, bias)), input.dtype)
    return backend, input.dtype


def _check_slow_transposed(input, weight, out_sizes, groups, stride, dilation, output_padding) -> None:
    """``slow_conv_transpose2d``'s own checks, after the kernel size's (on 2D views)."""
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {dilation[0]}, "
                           f"dilation_width: {dilation[1]}")
    if any(o >= s and o >= d for o, s, d in zip(output_padding, stride, dilation)):
        described = " ".join(f"{kind}_{dim}: {value}" for kind, values in
                             zip(("output_padding", "stride", "dilation"), (output_padding, stride, dilation))
                             for dim, value in zip(("height", "width"), values))
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got {described}")
    if weight.size == 0:
        # each group's weight on its own
        group_weight = (weight.shape[0] // groups, *weight.shape[1:2], *_as_2d(weight.shape[2:], 1))
        raise RuntimeError(f"non-empty 2D or 4D weight tensor expected, but got: {list(group_weight)}")
    if any(size < 1 for size in out_sizes):
        sizes_2d = _as_2d(input.shape[2:], 1)
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, sizes_2d))}). Calculated output "
                           f"size per channel: ({' x '.join(map(str, _as_2d(out_sizes, 1)))}). Output size is too "
                           f"small")


def _check_written(computed: dt.dtype, target: np.dtype) -> None:
    """An in-place write's cast rule: no lower category."""
    if not dt.can_cast(computed, dt.NP_TO_DTYPE[target]):
        raise RuntimeError(f"result type {scalar_type_name(computed)} can't be cast to the desired output type "
                           f"{scalar_type_name(dt.NP_TO_DTYPE[target])}")


def _empty_dtype(input, weight, bias, out_sizes, out_channels: int) -> np.dtype:
    """The dtype of ATen's empty-input path: the input times the weight's first element (times
    the empty weight when there are no channels), plus the bias's first element in place."""
    if input.shape[1] == 0:
        dtype = dt.result_dtype((input, weight))
    else:
        if weight.size == 0:
            raise IndexError("select(): index 0 out of range for tensor of size [0] at dimension 0")
        dtype = dt.result_dtype((input, np.empty((), weight.dtype)))
    if bias is not None:
        _check_written(dt.result_dtype((np.empty((1,), dtype._np), np.empty((), bias.dtype))), dtype._np)
    if any(size < 0 for size in out_sizes):
        _check_view_shape([input.shape[0], out_channels, *_as_2d(out_sizes, 1)])
    return dtype._np


def _check_view_shape(shape: list[int]) -> None:
    """``view``'s errors for a shape with negative sizes, viewing no elements (where ATen's
    empty path views its result as sizes a transposed convolution computed negative)."""
    inferred = None
    for index, size in enumerate(shape):
        if size == -1:
            if inferred is not None:
                raise RuntimeError("only one dimension can be inferred")
            inferred = index
        elif size < 0:
            raise RuntimeError(f"invalid shape dimension {size} at index {index} of shape {shape}")
    raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {shape} because the unspecified dimension "
                       f"size -1 can be any value and is ambiguous")


# -- kernels: see _im2col.py ---------------------------------------------------------------------

def _transposed_sizes(sizes, weight_shape, stride, padding, dilation, output_padding) -> list[int]:
    return [(size - 1) * s - 2 * p + d * (k - 1) + 1 + o for size, s, p, d, k, o in
            zip(sizes, stride, padding, dilation, weight_shape[2:], output_padding)]


def _cast_bias(bias: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``bias`` copied into a ``dtype`` output (a complex one's imaginary part dropped)."""
    if bias.dtype.kind == "c" and dtype.kind != "c":
        bias = bias.real
    with np.errstate(invalid="ignore"):
        return bias.astype(dtype, copy=False)


def _run(input, weight, bias, stride, padding, dilation, groups, transposed=False, output_padding=0,
         allow_complex=True, extra=None):
    """A checked convolution of a batched input (``padding`` symmetric, plus ``extra`` after in
    each dimension: 'same' padding's odd one) plus ``bias``."""
    plan = _check_arguments(input, weight, bias, stride, padding, dilation, groups, transposed, output_padding,
                            allow_complex, extra)
    if plan.backend == "empty":
        return np.zeros(plan.shape, plan.dtype)
    if not transposed:
        sides = [(p, p + e) for p, e in zip(plan.padding, extra or (0,) * len(plan.padding))]
        # PyTorch's kernels accumulate onto the bias, cast to the input's dtype
        return _correlate(input, weight, plan.stride, sides, plan.dilation, groups,
                          None if bias is None else _cast_bias(bias, input.dtype))
    if plan.backend == "mkldnn":  # oneDNN adds the bias (of the input's dtype) before rounding
        return _spread(input, weight, plan.shape[2:], plan.stride, [(p, p) for p in plan.padding], plan.dilation,
                       groups, bias=bias)
    result = _spread(input, weight, plan.shape[2:], plan.stride, [(p, p) for p in plan.padding], plan.dilation,
                     groups, rounded=input.dtype in HALF_TYPES)
    if bias is not None:
        # the transposed kernel adds the bias in place, computed in the promoted dtype
        computed = dt.result_dtype((result, bias))._np
        biased = result.astype(computed, copy=False) + bias.astype(computed, copy=False).reshape(
            -1, *(1,) * (weight.ndim - 2))
        result = biased.astype(result.dtype, copy=False)
    return result


# -- meta rules -------------------------------------------------------------------------------------
# The drivers below (``_conv_nd``, ``_conv_transpose_nd``) take the function that runs the batched
# convolution: ``_run`` for data, ``_run_meta`` for meta arrays, which runs the same checks and
# computes the output sizes as the kernels do, with no data.

def _run_meta(input, weight, bias, stride, padding, dilation, groups, transposed=False, output_padding=0,
              allow_complex=True, extra=None):
    """``_run``'s result as a MetaArray: its checks, its output's dtype and shape."""
    plan = _check_arguments(input, weight, bias, stride, padding, dilation, groups, transposed, output_padding,
                            allow_complex, extra)
    return MetaArray(plan.shape, plan.dtype)


def _batch(array):
    """``array[None]``: an unbatched input with a batch dimension of 1 (meta arrays too)."""
    return MetaArray((1, *array.shape), array.dtype) if type(array) is MetaArray else array[None]


def _crop_start(array, dim: int, count: int):
    """``array`` without its first ``count`` entries along ``dim`` (meta arrays too), as
    ``constant_pad_nd`` with a negative padding crops."""
    if array.shape[dim] < count:
        raise RuntimeError("narrow(): length must be non-negative.")
    shape = (*array.shape[:dim], array.shape[dim] - count, *array.shape[dim + 1:])
    if type(array) is MetaArray:
        return MetaArray(shape, array.dtype)
    return array[(slice(None),) * dim + (slice(count, None),)]


def _unbatch(array):
    """``array[0]``: the batch dimension of 1 taken off again."""
    return MetaArray(array.shape[1:], array.dtype) if type(array) is MetaArray else array[0]


def _convolution_backward_meta(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                               output_padding, groups, output_mask):
    if grad_output.dtype == np.bool_ or grad_output.dtype.kind == "c":
        raise not_implemented("slow_conv_transpose2d_out_cpu" if transposed else "slow_conv2d_cpu",
                              dt.NP_TO_DTYPE[grad_output.dtype])
    if input.shape[0] == 0 or input.shape[1] == 0:
        return _empty_backward(grad_output, input, weight, transposed, output_mask, MetaArray)
    spatial = weight.ndim - 2
    for name, value in (("stride", stride), ("padding", padding), ("dilation", dilation)):
        _expand(name, value, spatial)
    # The input's gradient has grad_output's dtype; the weight's the dtype of the operand it
    # correlates with grad_output (the input's, or grad_output's own when transposed).
    return (MetaArray(input.shape, grad_output.dtype) if output_mask[0] else None,
            MetaArray(weight.shape, grad_output.dtype if transposed else input.dtype) if output_mask[1] else None,
            MetaArray(grad_output.shape[1:2], grad_output.dtype) if output_mask[2] else None)


def _empty_backward(grad_output, input, weight, transposed: bool, output_mask, make) -> tuple:
    """The gradients of a convolution of an input without batch or channels: zeros (``make``:
    ``np.zeros`` or ``MetaArray``), the bias's one per output channel of the weight."""
    out_channels = grad_output.shape[1] if transposed else weight.shape[0]
    return (make(input.shape, grad_output.dtype) if output_mask[0] else None,
            make(weight.shape, grad_output.dtype if transposed else input.dtype) if output_mask[1] else None,
            make((out_channels,), grad_output.dtype) if output_mask[2] else None)


def _ordered(opdef, args, kwargs) -> tuple:
    """The op's arguments in its parameters' order, defaults filled in."""
    bound = opdef.signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.arguments.values())


def _meta_driver(driver, name: str, spatial: int) -> MetaRule:
    """A conv function's meta rule: its driver with ``_run_meta``."""
    return MetaRule(lambda opdef, args, kwargs: driver(name, spatial, *_ordered(opdef, args, kwargs), run=_run_meta),
                    f"{name}_meta")


# PyTorch's general op has no complex kernel (conv1d and conv2d split complex operands).
def _convolution_meta_rule(opdef, args, kwargs):
    input, weight, bias, stride, padding, dilation, transposed, output_padding, groups = _ordered(opdef, args, kwargs)
    return _run_meta(input, weight, bias, stride, padding, dilation, groups, transposed, output_padding,
                     allow_complex=False)


_convolution_meta = MetaRule(_convolution_meta_rule, "convolution_meta")


# -- gradients ------------------------------------------------------------------------------------
#
# Every convolution's gradient is one call to ``_convolution_backward`` (ATen's
# ``convolution_backward``), whose own gradient is written with convolutions and itself, so
# gradients of any order work.

def _parts(x):
    """(real, imaginary) parts of a tensor; the imaginary part None for a real one."""
    return (x.real, x.imag) if x.is_complex() else (x, None)


def _bilinear(function, x, y):
    """``function(x, y)`` for a real-bilinear ``function`` of real tensors, extended to complex
    operands through their parts (as PyTorch's conv2d splits complex operands)."""
    (a, b), (c, d) = _parts(x), _parts(y)
    real = function(a, c)
    imaginary = None if d is None else function(a, d)
    if b is not None:
        imaginary = function(b, c) if imaginary is None else imaginary + function(b, c)
        if d is not None:
            real = real - function(b, d)
    return real if imaginary is None else ops.complex(real, imaginary)


def _convolve(input, weight, *arguments):
    """``convolution(input, weight, None, *arguments)``, complex operands too (the op refuses
    them, as PyTorch's does)."""
    convolution = ops.convolution
    return _bilinear(lambda x, w: convolution(x, w, None, *arguments), input, weight)


def _backward(grad, input, weight, arguments, mask, bias_sizes=None):
    """``_convolution_backward(grad, input, weight, bias_sizes, *arguments, mask)``, complex
    operands too (the op refuses them, as PyTorch's does)."""
    backward = ops._convolution_backward
    if not (grad.is_complex() or input.is_complex() or weight.is_complex()):
        return backward(grad, input, weight, bias_sizes, *arguments, mask)
    # The input's gradient is bilinear in (grad, weight) and needs only the input's shape, the
    # weight's in (input, grad) and needs only the weight's shape.
    shaped_input, shaped_weight = _parts(input)[0], _parts(weight)[0]
    grad_input = grad_weight = grad_bias = None
    if mask[0]:
        grad_input = _bilinear(lambda g, w: backward(g, shaped_input, w, None, *arguments, [True, False, False])[0],
                               grad, weight)
    if mask[1]:
        grad_weight = _bilinear(
            lambda x, g: backward(g, x, shaped_weight, None, *arguments, [False, True, False])[1], input, grad)
    if mask[2]:
        grad_bias = grad.sum([0, *range(2, grad.dim())])
    return grad_input, grad_weight, grad_bias


def _backward_mask(needs_input_grad) -> list[bool]:
    return [needs_input_grad[0], needs_input_grad[1], len(needs_input_grad) > 2 and needs_input_grad[2]]


def _convolution_grad(grad, input, weight, stride, padding, dilation, transposed, output_padding, groups,
                      needs_input_grad):
    spatial = weight.dim() - 2
    arguments = (list(_expand("stride", stride, spatial)), list(_expand("padding", padding, spatial)),
                 list(_expand("dilation", dilation, spatial)), transposed,
                 list(_expand("output_padding", output_padding, spatial)), groups)
    mask = _backward_mask(needs_input_grad)
    # PyTorch passes the bias's sizes when there is a bias (here: when its gradient is wanted)
    bias_sizes = [weight.shape[1] * groups if transposed else weight.shape[0]] if mask[2] else None
    # Complex operands' gradients use their partners' conjugates.
    return _backward(grad, _conj(input), _conj(weight), arguments, mask, bias_sizes)


def _convolution_backward_grad(grad, grad_output, input, weight, stride, padding, dilation, transposed,
                               output_padding, groups, needs_input_grad):
    # With gI = B(gO, W) and gW = C(I, gO) bilinear and <gO, conv(I, W)> = <gI, I> = <gW, W>:
    # gO's gradient is conv(ggI, W) + conv(I, ggW) + ggB, I's is B(gO, ggW), W's is C(ggI, gO)
    # (each partner conjugated for complex operands).
    grad_input, grad_weight, grad_bias = grad
    arguments = (stride, padding, dilation, transposed, output_padding, groups)
    for_output = for_input = for_weight = None
    if needs_input_grad[0]:
        terms = []
        if grad_input is not None:
            terms.append(_convolve(grad_input, _conj(weight), *arguments))
        if grad_weight is not None:
            terms.append(_convolve(_conj(input), grad_weight, *arguments))
        if grad_bias is not None:
            terms.append(grad_bias.reshape(-1, *(1,) * (weight.dim() - 2)).expand(tuple(grad_output.shape)))
        for term in terms:
            for_output = term if for_output is None else for_output + term
    if needs_input_grad[1] and grad_weight is not None:
        for_input = _backward(_conj(grad_output), input, grad_weight, arguments, [True, False, False])[0]
    if needs_input_grad[2] and grad_input is not None:
        for_weight = _backward(_conj(grad_output), grad_input, weight, arguments, [False, True, False])[1]
    return for_output, for_input, for_weight


@op(grad=_convolution_backward_grad, meta=rule(_convolution_backward_meta),
    errors=(Sample((TensorSpec((1, 1, 2), "complex64"), TensorSpec((1, 1, 3), "complex64"),
                    TensorSpec((1, 1, 2), "complex64"), None, [1], [0], [1], False, [0], 1, [True, True, True])),
            Sample((TensorSpec((1, 1, 2)), TensorSpec((1, 1, 3)), TensorSpec((1, 1, 2)), None, [1, 1], [0], [1],
                    False, [0], 1, [True, False, False]))),
    samples=(
    Sample((TensorSpec((1, 2, 3, 3)), TensorSpec((1, 1, 5, 5)), TensorSpec((2, 1, 3, 3)), [2], [1, 1], [0, 0],
            [1, 1], False, [0, 0], 1, [True, True, True])),
    Sample((TensorSpec((2, 2, 3), "float64"), TensorSpec((2, 2, 4), "float64"), TensorSpec((2, 1, 2), "float64"),
            None, [2], [1], [1], False, [0], 2, [True, True, False])),
    Sample((TensorSpec((1, 2, 3, 4), "float64"), TensorSpec((1, 1, 2, 2), "float64"),
            TensorSpec((1, 2, 2, 3), "float64"), None, [2, 1], [1, 0], [1, 1], True, [1, 0], 1,
            [True, True, True])),
    Sample((TensorSpec((1, 2, 3, 3), "float64"), TensorSpec((1, 1, 4, 4), "float64"),
            TensorSpec((2, 1, 2, 2), "float64"), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
            [False, True, False]))), aten="convolution_backward.default",
    schema={"bias_sizes": "SymInt[]?", "output_mask": "bool[3]", "(returns)": "Tensor, Tensor, Tensor"}, tags=("core",))
def _convolution_backward(grad_output: Tensor, input: Tensor, weight: Tensor, bias_sizes: list[int] | None,
                          stride: list[int], padding: list[int], dilation: list[int], transposed: bool,
                          output_padding: list[int], groups: int, output_mask: list[bool]) -> tuple:
    """The gradients of ``convolution(input, weight, bias, ...)`` for the output gradient
    ``grad_output``: (input's, weight's, bias's), each only where ``output_mask`` asks for it
    (None otherwise) — ATen's ``convolution_backward``.

    >>> import tensormodes as tm
    >>> g = tm._convolution_backward(tm.ones(1, 1, 2), tm.ones(1, 1, 3), tm.ones(1, 1, 2), None, [1], [0], [1],
    ...                              False, [0], 1, [True, True, True])
    >>> [t.tolist() for t in g]
    [[[[1.0, 2.0, 1.0]]], [[[2.0, 2.0]]], [2.0]]
    """
    if grad_output.dtype == np.bool_ or grad_output.dtype.kind == "c":
        raise not_implemented("slow_conv_transpose2d_out_cpu" if transposed else "slow_conv2d_cpu",
                              dt.NP_TO_DTYPE[grad_output.dtype])
    if input.shape[0] == 0 or input.shape[1] == 0:
        return _empty_backward(grad_output, input, weight, transposed, output_mask, np.zeros)
    spatial = weight.ndim - 2
    stride, padding, dilation = (_expand(name, value, spatial) for name, value in
                                 (("stride", stride), ("padding", padding), ("dilation", dilation)))
    sides = [(p, p) for p in padding]
    grad_input = grad_weight = grad_bias = None
    extended = None
    if not transposed and output_mask[0] and output_mask[1]:  # both use grad_output on the same grid
        layout = _Layout(input.shape[2:], weight.shape[2:], stride, sides, dilation)
        extended = layout.extend(_working(grad_output), groups)
    if output_mask[0]:
        if transposed:
            grad_input = _correlate(grad_output, weight, stride, sides, dilation, groups)
            grad_input = np.ascontiguousarray(grad_input[(slice(None), slice(None),
                                                          *(slice(0, size) for size in input.shape[2:]))])
        else:
            grad_input = _spread(grad_output, weight, input.shape[2:], stride, sides, dilation, groups, extended)
    if output_mask[1]:
        grad_weight = _weight_product(grad_output, input, weight.shape, stride, sides, dilation, groups) \
            if transposed else _weight_product(input, grad_output, weight.shape, stride, sides, dilation, groups,
                                               extended)
    if output_mask[2]:
        # The ufunc itself, not ndarray.sum (a NumPy Python function): inf - inf then warns from
        # here, where tensormodes' warning filter silences it, as PyTorch is silent.
        grad_bias = np.asarray(np.add.reduce(grad_output, axis=(0, *range(2, 2 + spatial))), dtype=grad_output.dtype)
    return grad_input, grad_weight, grad_bias


def _recorded_dtype(input, weight) -> dt.dtype:
    """The dtype of a convolution's result (the empty path's product's, else the input's), for
    the autograd checks below (``input`` and ``weight`` tensors)."""
    if input.shape[0] and input.shape[1]:
        return input.dtype
    # the input times the weight's first element (a 0-dim tensor), or times the empty weight
    weight_shape = () if input.shape[1] else (1,)
    return dt.result_dtype((np.empty((1,), input.dtype._np), np.empty(weight_shape, weight.dtype._np)))


def _check_recorded(dtype: dt.dtype) -> bool:
    """PyTorch's autograd errors for a recorded convolution whose result it cannot differentiate."""
    if dtype.is_complex:
        raise RuntimeError("convolution does not support automatic differentiation for outputs with complex dtype.")
    if not dtype.is_floating_point:
        raise RuntimeError(f"Autograd not support dtype: {scalar_type_name(dtype)}")
    return True


def _convolution_differentiable(input, weight, *arguments) -> bool:
    """ATen's ``convolution`` records only real floating results."""
    return _check_recorded(_recorded_dtype(input, weight))


def _conv_differentiable(input, weight, *arguments) -> bool:
    """The functions split a complex input into real convolutions (which autograd records), and
    call ``convolution`` for the rest."""
    return input.is_complex() or _check_recorded(_recorded_dtype(input, weight))


@op(grad=_convolution_grad, meta=_convolution_meta, differentiable=_convolution_differentiable,
    errors=(Sample((TensorSpec((1, 2, 4, 4)), TensorSpec((3, 3, 2, 2)), None, [1, 1], [0, 0], [1, 1], False,
                    [0, 0], 1)),
            Sample((TensorSpec((1, 2, 4)), TensorSpec((2, 3, 2)), None, [1], [1], [1], True, [1], 1)),
            Sample((TensorSpec((1, 2, 4), "complex64"), TensorSpec((3, 2, 2), "complex64"), None, [1], [0], [1],
                    False, [0], 1))),
    samples=(
    Sample((TensorSpec((1, 2, 4, 4)), TensorSpec((3, 2, 2, 2)), TensorSpec((3,)), [1, 1], [0, 0], [1, 1], False,
            [0, 0], 1)),
    Sample((TensorSpec((2, 2, 5), "float64"), TensorSpec((2, 1, 3), "float64"), None, [2], [1], [1], False, [0],
            2)),
    Sample((TensorSpec((1, 2, 3, 3), "float64"), TensorSpec((2, 2, 2, 2), "float64"), TensorSpec((4,), "float64"),
            [2, 2], [1, 0], [1, 1], True, [1, 0], 2)),
    Sample((TensorSpec((1, 2, 4)), TensorSpec((2, 3, 2)), None, [1], [1], [2], True, [1], 1)),
    Sample((TensorSpec((1, 2, 4, 4), "int64", -3, 3), TensorSpec((1, 2, 2, 2), "int64", -3, 3), None, [1, 1], [1, 1],
            [1, 1], False, [0, 0], 1))), tags=("core",))
def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: list[int], padding: list[int],
                dilation: list[int], transposed: bool, output_padding: list[int], groups: int) -> Tensor:
    """The convolution of a batched ``input`` (N, C, *spatial) with ``weight`` — (O, C / groups,
    *kernel), or (C, O / groups, *kernel) when ``transposed`` — plus ``bias``: ATen's general
    op behind ``conv1d``, ``conv2d`` and the transposed convolutions.

    >>> import tensormodes as tm
    >>> tm.convolution(tm.ones(1, 1, 3), tm.ones(1, 1, 2), None, [1], [0], [1], False, [0], 1).tolist()
    [[[2.0, 2.0]]]
    """
    # PyTorch's general op has no complex kernel (conv1d and conv2d split complex operands).
    return _run(input, weight, bias, stride, padding, dilation, groups, transposed, output_padding,
                allow_complex=False)


# -- conv1d / conv2d ------------------------------------------------------------------------------

def _as_list(value, spatial: int):
    """An int argument of conv1d / conv2d as one per dimension of the function (a list is left
    for ``convolution``'s check against the weight, as PyTorch's argument parser does)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return [int(value)] * spatial
    return list(value)


def _resolve_padding(padding, weight_shape, stride, dilation, input=None) -> list[tuple[int, int]]:
    """``padding`` (ints or 'valid' / 'same') as (before, after) per spatial dimension. PyTorch's
    'same' pads ``dilation * (kernel - 1)`` in all, the odd one after; ``input`` (batched): check
    its dimensions against the weight's first, as ATen's 'same' convolution does."""
    spatial = len(weight_shape) - 2
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * max(spatial, 1)
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if spatial < 1:
            raise RuntimeError("weight should have at least three dimensions")
        if input is not None and input.ndim != len(weight_shape):
            raise RuntimeError(f"Expected {len(weight_shape)}-dimensional input for {len(weight_shape)}-dimensional "
                               f"weight{list(weight_shape)}, but got {input.ndim}-dimensional input of size "
                               f"{list(input.shape)} instead")
        stride, dilation = _as_list(stride, 1), _as_list(dilation, 1)
        for name, values in (("stride", stride), ("dilation", dilation)):
            if len(values) not in (1, spatial):
                raise RuntimeError(f"{name} cannot broadcast to {spatial} dimensions")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        totals = [d * (k - 1) for k, d in zip(weight_shape[2:], _expand("dilation", dilation, spatial))]
        # C++'s division (towards zero): an empty kernel's negative total leaves ``after`` below
        # ``before``, which PyTorch's 'same' convolution crops off the input's start instead
        return [(int(total / 2), total - int(total / 2)) for total in totals]
    return [(p, p) for p in _expand("padding", padding, spatial)]


def _conv_nd(name: str, spatial: int, input, weight, bias, stride, padding, dilation, groups, run=_run):
    if not isinstance(padding, str):
        _check_bias_dtype(input, bias)
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to {name}, but "
                           f"got input of size: {list(input.shape)}")
    if input.dtype.kind == "c":
        _check_same_type(input, weight, bias)  # PyTorch convolves a complex input's parts
    unbatched = input.ndim == spatial + 1
    batched = _batch(input) if unbatched else input
    stride, dilation = _as_list(stride, spatial), _as_list(dilation, spatial)
    if not isinstance(padding, str):
        result = run(batched, weight, bias, stride, _as_list(padding, spatial), dilation, groups)
        return _unbatch(result) if unbatched else result
    sides = _resolve_padding(padding, weight.shape, stride, dilation, batched)
    for dim, (before, after) in enumerate(sides):
        if after < before:
            batched = _crop_start(batched, 2 + dim, before - after)
    # The odd extra padding of 'same' goes after the input.
    result = run(batched, weight, bias, stride, [b for b, _ in sides], dilation, groups,
                 extra=[max(a - b, 0) for b, a in sides])
    return _unbatch(result) if unbatched else result


def _conv_nd_grad(grad, input, weight, stride, padding, dilation, groups, needs_input_grad):
    spatial = weight.dim() - 2
    unbatched = input.dim() == spatial + 1
    if unbatched:
        grad, input = grad.unsqueeze(0), input.unsqueeze(0)
    sides = _resolve_padding(padding, tuple(weight.shape), stride, dilation)
    sizes = tuple(input.shape[2:])
    if any(a != b for b, a in sides):
        # The odd extra padding of 'same', as zeros after the input (cropped off its gradient).
        for dim, (b, a) in enumerate(sides):
            if a > b:
                zeros = input.new_zeros((*input.shape[:2 + dim], a - b, *input.shape[3 + dim:]))
                input = ops.cat([input, zeros], 2 + dim)
    arguments = (list(_expand("stride", stride, spatial)), [b for b, _ in sides],
                 list(_expand("dilation", dilation, spatial)), False, [0] * spatial, groups)
    grad_input, grad_weight, grad_bias = _backward(grad, _conj(input), _conj(weight), arguments,
                                                   _backward_mask(needs_input_grad))
    if grad_input is not None:
        if any(a != b for b, a in sides):
            grad_input = grad_input[(slice(None), slice(None), *(slice(0, size) for size in sizes))]
        if unbatched:
            grad_input = grad_input.squeeze(0)
    return grad_input, grad_weight, grad_bias


@op(node="convolution", differentiable=_conv_differentiable, decompose=conv_decomposition(1),
    meta=_meta_driver(_conv_nd, "conv1d", 1),
    errors=(Sample((TensorSpec((2, 2, 2, 5)), TensorSpec((3, 2, 3)))),
            Sample((TensorSpec((1, 2, 2)), TensorSpec((3, 2, 3)))),
            Sample((TensorSpec((1, 2, 5)), TensorSpec((2, 2, 3))), {"padding": "same", "stride": 2})),
    grad=_conv_nd_grad, samples=(
    Sample((TensorSpec((2, 2, 5)), TensorSpec((3, 2, 3)), TensorSpec((3,)))),
    Sample((TensorSpec((2, 6), "float64"), TensorSpec((2, 2, 2), "float64")), {"stride": 2, "padding": 1}),
    Sample((TensorSpec((1, 4, 6), "float64"), TensorSpec((4, 2, 3), "float64"), TensorSpec((4,), "float64")),
           {"padding": "same", "dilation": 2, "groups": 2}),
    Sample((TensorSpec((1, 2, 5)), TensorSpec((2, 2, 3))), {"padding": "same"}),
    Sample((TensorSpec((1, 2, 5)), TensorSpec((2, 2, 3))), {"padding": "valid", "dilation": [2]}),
    Sample((TensorSpec((2, 1, 6), "int32", -3, 3), TensorSpec((2, 1, 2), "int32", -3, 3)), {"stride": [3]})))
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """Applies a 1D convolution over an input signal composed of several input planes:
    ``input`` (N, C, L) or unbatched (C, L), ``weight`` (O, C / groups, K); ``padding`` is
    ints or ``'valid'`` / ``'same'``.

    >>> import tensormodes as tm
    >>> tm.conv1d(tm.tensor([[[1.0, 2.0, 3.0]]]), tm.tensor([[[1.0, -1.0]]])).tolist()
    [[[-1.0, -1.0]]]
    """
    return _conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@op(node="convolution", differentiable=_conv_differentiable, decompose=conv_decomposition(2),
    meta=_meta_driver(_conv_nd, "conv2d", 2),
    errors=(Sample((TensorSpec((1, 3, 4, 4)), TensorSpec((3, 2, 2, 2)))), Sample((TensorSpec((1, 2, 4, 4)),
            TensorSpec((3, 2, 2, 2))), {"stride": 0}), Sample((TensorSpec((1, 2, 4, 4)), TensorSpec((3, 2, 2, 2)),
            TensorSpec((2,))))),
    grad=_conv_nd_grad, samples=(
    Sample((TensorSpec((1, 2, 4, 4)), TensorSpec((3, 2, 2, 2)), TensorSpec((3,)))),
    Sample((TensorSpec((2, 3, 3), "float64"), TensorSpec((2, 2, 2, 2), "float64")), {"padding": (1, 0)}),
    Sample((TensorSpec((1, 4, 4, 3), "float64"), TensorSpec((2, 2, 2, 2), "float64"), TensorSpec((2,), "float64")),
           {"stride": (2, 1), "padding": 1, "groups": 2}),
    Sample((TensorSpec((1, 1, 4, 4), "float64"), TensorSpec((2, 1, 3, 3), "float64")),
           {"padding": "same", "dilation": (1, 2)}),
    Sample((TensorSpec((1, 1, 5, 5)), TensorSpec((1, 1, 2, 2))), {"dilation": 2, "stride": 2}),
    Sample((TensorSpec((1, 2, 4, 4), "float16"), TensorSpec((1, 2, 2, 2), "float16")), {"padding": "valid"}),
    Sample((TensorSpec((2, 3, 8, 8)), TensorSpec((4, 3, 3, 3)), TensorSpec((4,)))),
    Sample((TensorSpec((1, 2, 4, 4), "int64", -3, 3), TensorSpec((1, 2, 2, 2), "int64", -3, 3)))))
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """Applies a 2D convolution over an input image composed of several input planes:
    ``input`` (N, C, H, W) or unbatched (C, H, W), ``weight`` (O, C / groups, kH, kW);
    ``padding`` is ints or ``'valid'`` / ``'same'``.

    >>> import tensormodes as tm
    >>> tm.conv2d(tm.ones(1, 1, 3, 3), tm.ones(1, 1, 2, 2), tm.tensor([0.5])).tolist()
    [[[[4.5, 4.5], [4.5, 4.5]]]]
    """
    return _conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose_nd(name: str, spatial: int, input, weight, bias, stride, padding, output_padding, groups,
                       dilation, run=_run):
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"Expected {spatial + 1}D (unbatched) or {spatial + 2}D (batched) input to {name}, but "
                           f"got input of size: {list(input.shape)}")
    if input.dtype.kind == "c":
        _check_same_type(input, weight, bias)  # PyTorch convolves a complex input's parts
    unbatched = input.ndim == spatial + 1
    result = run(_batch(input) if unbatched else input, weight, bias, _as_list(stride, spatial),
                 _as_list(padding, spatial), _as_list(dilation, spatial), groups, True,
                 _as_list(output_padding, spatial))
    return _unbatch(result) if unbatched else result


def _conv_transpose_nd_grad(grad, input, weight, stride, padding, output_padding, groups, dilation,
                            needs_input_grad):
    spatial = weight.dim() - 2
    unbatched = input.dim() == spatial + 1
    if unbatched:
        grad, input = grad.unsqueeze(0), input.unsqueeze(0)
    grad_input, grad_weight, grad_bias = _convolution_grad(grad, input, weight, stride, padding, dilation, True,
                                                           output_padding, groups, needs_input_grad)
    if grad_input is not None and unbatched:
        grad_input = grad_input.squeeze(0)
    return grad_input, grad_weight, grad_bias


@op(node="convolution", differentiable=_conv_differentiable,
    meta=_meta_driver(_conv_transpose_nd, "conv_transpose1d", 1),
    errors=(Sample((TensorSpec((1, 2, 4)), TensorSpec((2, 3, 2))), {"output_padding": 1}),
            Sample((TensorSpec((1, 3, 4)), TensorSpec((2, 3, 2))))),
    grad=_conv_transpose_nd_grad, samples=(
    Sample((TensorSpec((2, 2, 4)), TensorSpec((2, 3, 2)), TensorSpec((3,)))),
    Sample((TensorSpec((2, 3), "float64"), TensorSpec((2, 2, 3), "float64")),
           {"stride": 2, "padding": 1, "output_padding": 1}),
    Sample((TensorSpec((1, 4, 3), "float64"), TensorSpec((4, 1, 2), "float64"), TensorSpec((2,), "float64"), 1, 0, 1,
            2, 2)),
    Sample((TensorSpec((1, 2, 3), "int64", -3, 3), TensorSpec((2, 1, 2), "int64", -3, 3)), {"stride": [3]})))
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """Applies a 1D transposed convolution operator over an input signal composed of several input
    planes (the gradient of ``conv1d`` with respect to its input): ``input`` (N, C, L) or (C, L),
    ``weight`` (C, O / groups, K).

    >>> import tensormodes as tm
    >>> tm.conv_transpose1d(tm.tensor([[[1.0, 2.0]]]), tm.tensor([[[1.0, 10.0]]])).tolist()
    [[[1.0, 12.0, 20.0]]]
    """
    return _conv_transpose_nd("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


@op(node="convolution", differentiable=_conv_differentiable,
    meta=_meta_driver(_conv_transpose_nd, "conv_transpose2d", 2),
    errors=(Sample((TensorSpec((1, 2, 1, 1)), TensorSpec((2, 3, 1, 1))), {"padding": 1}),
            Sample((TensorSpec((2, 2)), TensorSpec((2, 3, 2, 2))))),
    grad=_conv_transpose_nd_grad, samples=(
    Sample((TensorSpec((1, 2, 3, 3)), TensorSpec((2, 3, 2, 2)), TensorSpec((3,)))),
    Sample((TensorSpec((2, 2, 3), "float64"), TensorSpec((2, 1, 2, 2), "float64")),
           {"stride": (2, 1), "padding": (1, 0), "output_padding": (1, 0)}),
    Sample((TensorSpec((1, 4, 2, 3), "float64"), TensorSpec((4, 1, 2, 2), "float64"), TensorSpec((2,), "float64"),
            1, 1, 0, 2, (2, 1))),
    Sample((TensorSpec((2, 3, 8, 8)), TensorSpec((3, 4, 3, 3))), {"stride": 2, "padding": 1, "output_padding": 1}),
    Sample((TensorSpec((1, 1, 3, 3), "float16"), TensorSpec((1, 2, 2, 2), "float16")))), aten="input")
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """Applies a 2D transposed convolution operator over an input image composed of several input
    planes (the gradient of ``conv2d`` with respect to its input): ``input`` (N, C, H, W) or
    (C, H, W), ``weight`` (C, O / groups, kH, kW).

    >>> import tensormodes as tm
    >>> tm.conv_transpose2d(tm.ones(1, 1, 2, 2), tm.ones(1, 1, 2, 2)).tolist()
    [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]
    """
    return _conv_transpose_nd("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups,
                              dilation)
