"""Range-like factory ops: ``arange``, ``linspace``, ``logspace``, ``eye``,
``tril_indices`` and ``triu_indices``.

Like the other factories (``creation.py``, whose argument checks they share) they take
no tensor, so only modes see them. ``arange`` and ``linspace`` follow PyTorch's CPU
kernels' arithmetic (fused multiply-adds; ``arange``'s vector lanes) to agree to the last bit.
"""

from __future__ import annotations

import math
import operator
import warnings
from numbers import Number

import numpy as np

from .. import _dtype as dt
from .._memory_format import strided
from .._meta_array import MetaArray
from .common import not_implemented, ops, resolve_dtype
from .creation import _DEFAULT_DTYPE, _is_int_like, _target_np, check_device, checked_fill_value, python_scalar
from .meta_rules import MetaRule, rule
from .registry import Sample, Tensor, TensorSpec, op

# -- meta rules (device="meta": the result's shape and dtype, checked as the kernels check, no data) ----

def _space_bound_meta(value, param: str, op_name: str):
    """A bound of ``linspace`` / ``logspace``: a 0-dim meta tensor stands for a value of its dtype."""
    if type(value) is MetaArray:
        if value.ndim != 0:
            raise RuntimeError(f"{op_name} only supports 0-dimensional start and end tensors, but got {param} "
                               f"with {value.ndim} dimension(s).")
        return np.ones((), value.dtype).item()
    return _linspace_bound(value, param, op_name)


def _space_meta(op_name: str) -> MetaRule:
    def compute(start, end, steps, base=10.0, *, dtype=None, device=None, **_):
        check_device(device)
        start, end = _space_bound_meta(start, "start", op_name), _space_bound_meta(end, "end", op_name)
        steps = _steps_arg(steps, op_name)
        if op_name == "logspace":
            python_scalar(base, "logspace", "base", 4)
        target = _space_dtype(start, end, dtype)
        if target is dt.bool:
            raise not_implemented(f"{op_name}_cpu", target)
        if target._category == dt._INT:  # the kernels' conversions, with their overflow errors
            if op_name == "linspace" or steps >= 2:
                _as_type(start, target)
            if steps >= 2:
                _as_type(end, target)
        return MetaArray((steps,), target._np)
    compute.__name__ = f"_{op_name}_meta"
    return rule(compute)


def _tril_size(row: int, col: int, offset: int) -> int:
    """How many elements of a ``row`` x ``col`` matrix lie on or below diagonal ``offset``:
    row ``i`` holds ``clamp(i + offset + 1, 0, col)`` of them, summed in closed form."""
    if row <= 0 or col <= 0:
        return 0
    first = offset + 1  # row 0's count before clamping; row i's is first + i
    empty = min(max(-first + 1, 0), row)  # rows 0 .. empty-1 hold nothing
    full = max(min(max(col - first, 0), row), empty)  # rows full .. row-1 are whole
    partial = (empty + full - 1) * (full - empty) // 2 + first * (full - empty)
    return partial + col * (row - full)


def _triangle_meta(upper: bool):
    name = "triu_indices" if upper else "tril_indices"

    def compute(row, col, offset=0, *, dtype=None, device=None, layout=None):
        check_device(device)
        target = _triangle_dtype(name, row, col, dtype)
        count = row * col - _tril_size(row, col, offset - 1) if upper else _tril_size(row, col, offset)
        return MetaArray((2, count), target._np)
    compute.__name__ = f"_{name}_meta"
    return rule(compute)


def _eye_meta(n, m=None, *, dtype=None, layout=None, device=None, requires_grad=False):
    check_device(device)
    return MetaArray(_eye_shape(n, m), _target_np(dtype))


# -- ranges ---------------------------------------------------------------------------------------------

def _range_scalar(value, param: str, position: int):
    value = python_scalar(value, "arange", param, position)
    return int(value) if type(value) is bool else value


def _format_bound(value) -> str:
    return str(value) if type(value) is int else format(value, "g")


def _arange_plan(start, end, step, dtype) -> tuple:
    """``arange``'s checked arguments: (start, end, step, result dtype, length), PyTorch's errors."""
    start, end, step = _range_scalar(start, "start", 1), _range_scalar(end, "end", 2), _range_scalar(step, "step", 3)
    if complex in (type(start), type(end), type(step)):
        raise RuntimeError("value cannot be converted to type double without overflow")
    if dtype is None:
        all_ints = type(start) is int and type(end) is int and type(step) is int
        target = dt.int64 if all_ints else _DEFAULT_DTYPE.get()[0]
    else:
        target = resolve_dtype(dtype)
    if target._category in (dt._BOOL, dt._COMPLEX):
        raise not_implemented("arange_cpu", target)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {_format_bound(start)} -> {_format_bound(end)}")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if target._category != dt._INT:
        return start, end, step, target, math.ceil((end - start) / step)
    first, last, increment = int(start), int(end), int(step)
    if target is dt.int64:
        if increment == 0:  # the step truncated to 0; PyTorch raises ValueError here
            raise ValueError("step must be nonzero")
        sign = 1 if increment > 0 else -1
        span = last - first + increment - sign
        length = abs(span) // abs(increment) if (span >= 0) == (increment > 0) else 0
    else:
        length = math.ceil((float(end) - float(start)) / float(step))
    return start, end, step, target, length


def _arange_meta(start=0, end=None, step=1, *, dtype=None, layout=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    check_device(device)
    _, _, _, target, length = _arange_plan(start, end, step, dtype)
    return MetaArray((length,), target._np)


@op(meta=rule(_arange_meta),
    errors=(Sample((0, 10, 0)), Sample((10, 0, 1)), Sample((0, 5), {"dtype": dt.bool})),
    factory=True, out=True, samples=(
    Sample((5,)), Sample((5.0,)), Sample((1, 2.5, 0.5)), Sample((10, 0, -3)), Sample((0, 10, 3), {"dtype": dt.float64}),
    Sample((0.5, 3), {"dtype": dt.int64}), Sample((0, 1, 0.1)), Sample((-1.5, 2.5, 0.75), {"dtype": dt.int32}),
    Sample((0, 1, 0.3), {"dtype": dt.float16}), Sample((0,))),
    aten={
        "arange.default": ("end", "step", "start: Scalar end="),
        "arange.start": ("step", "start: Scalar="),
        "arange.start_step": ("start: Scalar=", "+core", "out=start_out"),
    },
    schema={"end": "Scalar="})
def arange(start: Number = 0, end: Number | None = None, step: Number = 1, *, dtype: dt.dtype | None = None,
           layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """Returns a 1-D tensor of values from ``[start, end)`` taken with common difference ``step``.

    ``arange(end)`` starts at 0. The dtype is ``int64`` when every argument is an
    integer, else the default dtype.

    >>> import tensormodes as tm
    >>> tm.arange(5)
    tensor([0, 1, 2, 3, 4])
    >>> tm.arange(1, 2.5, 0.5)
    tensor([1.0000, 1.5000, 2.0000])
    """
    if end is None:
        start, end = 0, start
    if type(start) is int and type(end) is int and type(step) is int and dtype is None:
        # The common all-int call; a zero step or a wrong sign takes the checking path below.
        if (step > 0 and end >= start) or (step < 0 and end <= start):
            check_device(device)
            return np.arange(start, end, step, dtype=np.int64)
    check_device(device)
    start, end, step, target, length = _arange_plan(start, end, step, dtype)
    if target._category == dt._INT:
        # PyTorch computes integer ranges in int64 from the truncated arguments.
        first, increment = int(start), int(step)
        values = first + increment * np.arange(length, dtype=np.int64)
        return values.astype(target._np)
    # PyTorch accumulates half types in float32 and the others in double, with fused
    # multiply-adds.
    accumulate = np.float32 if target in (dt.float16, dt.bfloat16) else np.float64
    first, increment = accumulate(start), accumulate(step)
    if target is dt.float32:
        return _stepped(length, target._np, accumulate, lambda at: _double_fma_to_float32(increment, at, first),
                        lambda base, j: _double_fma_to_float32(j, increment, base))
    return _stepped(length, target._np, accumulate, lambda at: _fma(increment, at, first, accumulate),
                    lambda base, j: _fma(j, increment, base, accumulate))


_RANGE_WARNING = ("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).")


def _range_plan(start, end, step, dtype) -> tuple:
    """``range``'s checked arguments in its accumulation type: (start, step, dtype, length)."""
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    target = _DEFAULT_DTYPE.get()[0] if dtype is None else resolve_dtype(dtype)
    if target._category in (dt._BOOL, dt._COMPLEX):
        raise not_implemented("range_cpu", target)
    values = [_range_scalar(v, param, i) for i, (v, param) in enumerate(((start, "start"), (end, "end"),
                                                                          (step, "step")), 1)]
    if target._category == dt._INT:  # PyTorch's accumulation type of an integer range is int64
        first, last, increment = (int(v) for v in values)
    else:  # float for half types, double for the others
        accumulate = np.float32 if target in (dt.float16, dt.bfloat16) else np.float64
        first, last, increment = (accumulate(v) for v in values)
    if increment == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(first) and math.isfinite(last)):
        raise RuntimeError(f"unsupported range: {_format_bound(first)} -> {_format_bound(last)}")
    if not ((increment > 0 and last >= first) or (increment < 0 and last <= first)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    span = last - first
    length = int(span / increment if type(span) is not int else abs(span) // abs(increment)) + 1
    return first, increment, target, length


def _range_meta(start=0, end=None, step=1, *, dtype=None, layout=None, device=None, requires_grad=False):
    check_device(device)
    return MetaArray((_range_plan(start, end, step, dtype)[3],), _target_np(dtype))


def _range_decomposition(start=0, end=None, step=1, dtype=None, layout=None, device=None, requires_grad=False):
    """What PyTorch's deprecated Python binding of ``range`` passes down: whole tensor options
    (the default dtype, strided, the device), no ``pin_memory``."""
    if end is None:
        return NotImplemented
    result = ops.ops.aten.range.step(start, end, step, dtype=resolve_dtype(dtype) or _DEFAULT_DTYPE.get()[0],
                                     layout=strided, device=ops.device("cpu" if device is None else device))
    return result.requires_grad_(True) if requires_grad else result


@op(name="range", meta=rule(_range_meta), factory=True, out=True, decompose=_range_decomposition,
    errors=(Sample((0, 5, 0)), Sample((3, 0)), Sample((0, 3), {"dtype": dt.bool})),
    samples=(Sample((0, 1, 0.1)), Sample((0, 10, 3)), Sample((0, 1, 0.1), {"dtype": dt.float64}),
             Sample((0, 2.5), {"dtype": dt.int64}), Sample((0, 1, 0.3), {"dtype": dt.float16}),
             Sample((5, -1, -2))),
    aten={"range.step": ("out=out",)}, schema={"start": "Scalar start=", "end": "Scalar end=", "step": "Scalar=1"})
def range_kernel(start: Number = 0, end: Number | None = None, step: Number = 1, *, dtype: dt.dtype | None = None,
                 layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """Deprecated (warns): the values from ``start`` to ``end`` *inclusive*, ``step`` apart, in the
    default dtype unless ``dtype`` is given; use ``arange`` for ``[start, end)``.

    >>> import tensormodes as tm, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     tm.range(1, 4)
    tensor([1., 2., 3., 4.])
    """
    if end is not None:  # (PyTorch's argument parser refuses a call without ``end`` before the warning)
        warnings.warn(_RANGE_WARNING, UserWarning, stacklevel=3)
    check_device(device)
    first, increment, target, length = _range_plan(start, end, step, dtype)
    positions = np.arange(length, dtype=np.int64 if type(first) is int else type(first))
    return (first + positions * increment).astype(target._np)


def _linspace_bound(value, param: str, op_name: str):
    if type(value) is np.ndarray:
        if value.ndim != 0:
            raise RuntimeError(f"{op_name} only supports 0-dimensional start and end tensors, but got {param} "
                               f"with {value.ndim} dimension(s).")
        return value.item()
    return value


def _steps_arg(steps, op_name: str) -> int:
    if not _is_int_like(steps):
        raise TypeError(f"{op_name}(): argument 'steps' (position 3) must be int, not {type(steps).__name__}")
    steps = operator.index(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return steps


def _spaced(start, end, steps: int, target: dt.dtype) -> np.ndarray:
    """PyTorch's evenly spaced points: from ``start`` in the first half, back from ``end``
    in the second, so both ends are exact. Integer types step in double and truncate."""
    halfway = steps // 2
    if target._category <= dt._INT:
        first, last = float(_as_type(start, target)), float(_as_type(end, target))
        step = (last - first) / (steps - 1)
        arithmetic = np.float64
    elif target._category == dt._COMPLEX:
        # PyTorch's complex step divides and multiplies by real numbers, part by part: the real
        # and imaginary parts are two real linspaces (a NaN or Inf in one stays out of the other)
        first, last = complex(start), complex(end)
        real = dt.float32 if target is dt.complex64 else dt.float64
        result = np.empty(steps, target._np)
        result.real = _spaced(first.real, last.real, steps, real)
        result.imag = _spaced(first.imag, last.imag, steps, real)
        return result
    else:
        kind = target._np.type
        if target in (dt.float16, dt.bfloat16):  # C++ converts double to half through float
            start, end = np.float32(start), np.float32(end)
        first, last = kind(start), kind(end)
        step = (last - first) / kind(steps - 1)
        arithmetic = target._np.type
        if target._np in (dt.float16._np, dt.bfloat16._np):
            # Half types round after every operation (their operators are function calls, never fused).
            index = np.arange(steps)
            return np.where(index < halfway, first + step * index.astype(target._np),
                            last - step * (steps - index - 1).astype(target._np))

    # One by one (PyTorch's linspace kernel does not take its vector path), with fused
    # multiply-adds: start + step * i, then end - step * (steps - 1 - i) for the second half.
    multiples = np.arange(steps, dtype=np.float64)
    multiples[halfway:] -= steps - 1
    bases = np.empty(steps, np.float64)
    bases[:halfway] = first
    bases[halfway:] = last
    return np.asarray(_fma(step, multiples, bases, arithmetic), arithmetic)


def _complex_spaced(start, end, steps: int, target: dt.dtype) -> np.ndarray:
    """The exponents of PyTorch's complex logspace: complex arithmetic throughout (its index
    is a complex number too, so a NaN or Inf part spreads to both)."""
    kind = target._np.type
    first, last = kind(start), kind(end)
    step = (last - first) / kind(steps - 1)
    index = np.arange(steps)
    return np.where(index < steps // 2, first + step * index, last - step * (steps - index - 1)).astype(target._np)


# PyTorch's CPU arange kernel runs in 32-byte vectors (two per loop step, the rest one by
# one): a vector starts from a base point rounded to the result type and adds multiples
# of the step, so its lanes round differently from the one-by-one formula. Reproducing
# both makes ``arange`` agree with PyTorch to the last bit.
_VECTOR_BYTES = 32


def _stepped(length: int, result: np.dtype, arithmetic, point, from_base) -> np.ndarray:
    """Points ``point(i)`` (one by one) with the vector blocks ``from_base(point(c) as result, j)``."""
    values = np.empty(length, result)
    width = _VECTOR_BYTES // result.itemsize
    blocked = length // (2 * width) * 2 * width
    if blocked:
        starts = np.arange(0, blocked, width)
        bases = np.asarray(point(starts)).astype(result).astype(arithmetic)
        lanes = np.asarray(from_base(bases[:, None], np.arange(width)[None, :])).astype(result)
        values[:blocked] = lanes.reshape(-1)
    values[blocked:] = np.asarray(point(np.arange(blocked, length, dtype=np.int64))).astype(result)
    return values


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scaled = a * 134217729.0  # 2**27 + 1: Veltkamp's split into two 26-bit halves
    high = scaled - (scaled - a)
    return high, a - high


def _fma(a, b, c, arithmetic) -> np.ndarray:
    """``a * b + c`` rounded once to ``arithmetic``, as the fused multiply-add PyTorch's
    compiled kernels use.

    Below float64 the product is exact in float64 and so is, nearly always, the
    rounding of the float64 sum to the narrower type; only a sum landing exactly
    halfway between two narrow neighbours can round the wrong way, and those few
    are redone with round-to-odd. In float64 the exact value is recovered with
    error-free transformations (Boldo and Melquiond's emulation), for up to
    ``_EXACT_FMA_LIMIT`` values: beyond, plain arithmetic (within an ulp) keeps it fast.
    """
    a, b, c = (np.asarray(x, np.float64) for x in (a, b, c))
    with np.errstate(invalid="ignore", over="ignore"):
        product = a * b
        total = product + c
        if arithmetic is not np.float64:
            guard = _GUARD_BITS[arithmetic]
            halfway = np.nonzero((total.view(np.int64) & ((1 << guard) - 1)) == (1 << (guard - 1)))
            if halfway[0].size:
                shape = total.shape
                ties, error = _two_sum(np.broadcast_to(c, shape)[halfway], np.broadcast_to(product, shape)[halfway])
                total[halfway] = _round_to_odd(ties, error)
            return total.astype(arithmetic)
        if total.size > _EXACT_FMA_LIMIT:
            return total
        a_high, a_low = _split(a)
        b_high, b_low = _split(b)
        product_error = ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low
        high, high_error = _two_sum(c, product)
        low, low_error = _two_sum(high_error, product_error)
        exact = high + _round_to_odd(low, low_error)
    return np.where(np.isfinite(product) & np.isfinite(c), exact, total)


_EXACT_FMA_LIMIT = 1 << 16
# float64 mantissa bits below a narrower type's mantissa: a float64 with exactly the top
# one of them set lies halfway between two neighbours of the narrower type.
_GUARD_BITS = {np.float32: 52 - 23, np.float16: 52 - 10}


def _double_fma_to_float32(a, b, c) -> np.ndarray:
    """A double fused multiply-add rounded to float32, cheaply: plain double arithmetic
    rounds to the same float32 except after cancellation or next to a float32 midpoint,
    and only those few values are recomputed exactly."""
    a, b, c = (np.asarray(x, np.float64) for x in (a, b, c))
    with np.errstate(invalid="ignore", over="ignore"):
        product = a * b
        total = product + c
        offset = (total.view(np.int64) & ((1 << 29) - 1)) - (1 << 28)
        doubtful = np.nonzero((np.abs(offset) <= 4) | (np.abs(total) < np.abs(product) * 2.0 ** -20))
        if doubtful[0].size:
            shape = total.shape
            total[doubtful] = _fma(*(np.broadcast_to(x, shape)[doubtful] for x in (a, b, c)), np.float64)
    return total.astype(np.float32)


def _round_to_odd(value: np.ndarray, error: np.ndarray) -> np.ndarray:
    """``value`` (a sum rounded to nearest, ``error`` what rounding lost) rounded to odd instead:
    an inexact result with an even last bit moves one ulp towards the lost part, so that a
    second rounding cannot meet a false tie."""
    inexact_even = (error != 0) & ((np.asarray(value).view(np.int64) & 1) == 0)
    return np.where(inexact_even, np.nextafter(value, np.where(error > 0, np.inf, -np.inf)), value)


def _two_sum(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``x + y`` rounded, and the rounding error (Knuth's TwoSum)."""
    total = x + y
    virtual = total - x
    return total, (x - (total - virtual)) + (y - virtual)


def _as_type(value, target: dt.dtype):
    """``value`` converted as C++ ``Scalar::to<T>()`` does (with its overflow check)."""
    return checked_fill_value(value, target) if target._category == dt._INT else bool(value)


def _space_dtype(start, end, dtype) -> dt.dtype:
    if dtype is not None:
        return resolve_dtype(dtype)
    if type(start) is complex or type(end) is complex:
        return dt.default_complex_dtype()
    return _DEFAULT_DTYPE.get()[0]


_SCALAR_0D = TensorSpec((), "float32", 0.0, 1.0)


@op(meta=_space_meta("linspace"),
    errors=(Sample((0, 1, -1)), Sample((TensorSpec((2,)), 1, 3)), Sample((0, 1, 3), {"dtype": dt.bool})),
    factory=True, out=True, samples=(
    Sample((0, 1, 5)), Sample((-2.5, 10, 7)), Sample((0, 10, 4), {"dtype": dt.int64}), Sample((0, 1, 1)),
    Sample((0, 1, 0)), Sample((0, 1j, 3)), Sample((3, -1, 6), {"dtype": dt.float64}),
    Sample((_SCALAR_0D, 4.0, 3)), Sample((1, 5, 9), {"dtype": dt.int16}), Sample((0, 1, 11), {"dtype": dt.float16})),
    aten={"linspace.default": ("start: Scalar", "end: Scalar"), "linspace.Tensor_Scalar": ()})
def linspace(start: Tensor | Number, end: Tensor | Number, steps: int, *, dtype: dt.dtype | None = None,
             layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """Creates a 1-D tensor of ``steps`` values evenly spaced from ``start`` to ``end``, inclusive.

    >>> import tensormodes as tm
    >>> tm.linspace(0, 1, 5)
    tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    >>> tm.linspace(0, 10, 4, dtype=tm.int64)
    tensor([ 0,  3,  6, 10])
    """
    check_device(device)
    start, end = _linspace_bound(start, "start", "linspace"), _linspace_bound(end, "end", "linspace")
    steps = _steps_arg(steps, "linspace")
    target = _space_dtype(start, end, dtype)
    if target is dt.bool:
        raise not_implemented("linspace_cpu", target)
    if steps <= 1:
        if target in (dt.float16, dt.bfloat16):
            start = np.float32(start)  # C++ converts double to half through float
        return np.full(steps, _as_type(start, target) if target._category == dt._INT else start, target._np)
    return _spaced(start, end, steps, target).astype(target._np)


@op(meta=_space_meta("logspace"),
    errors=(Sample((0, 1, -2)), Sample((0, 1, 3), {"dtype": dt.bool}), Sample((0, 1000, 3), {"dtype": dt.int8})),
    factory=True, out=True, samples=(
    Sample((0, 2, 3)), Sample((0, 2, 3), {"base": 2}), Sample((0, 2, 3), {"dtype": dt.int64}),
    Sample((0, 3, 4, 2), {"dtype": dt.int32}), Sample((-1, 1, 5), {"base": 3.0, "dtype": dt.float64}),
    Sample((1.5, 1.5, 1)), Sample((0, 1, 0)), Sample((_SCALAR_0D, 1, 3))),
    aten={"logspace.default": ("start: Scalar", "end: Scalar"), "logspace.Tensor_Scalar": ()})
def logspace(start: Tensor | Number, end: Tensor | Number, steps: int, base: float = 10.0, *,
             dtype: dt.dtype | None = None, layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """Creates a 1-D tensor of ``steps`` values spaced evenly on a log scale, from
    ``base ** start`` to ``base ** end``.

    >>> import tensormodes as tm
    >>> tm.logspace(0, 2, 3)
    tensor([  1.,  10., 100.])
    >>> tm.logspace(0, 3, 4, base=2, dtype=tm.int64)
    tensor([1, 2, 4, 8])
    """
    check_device(device)
    start, end = _linspace_bound(start, "start", "logspace"), _linspace_bound(end, "end", "logspace")
    steps = _steps_arg(steps, "logspace")
    base = python_scalar(base, "logspace", "base", 4)
    target = _space_dtype(start, end, dtype)
    if target is dt.bool:
        raise not_implemented("logspace_cpu", target)
    if steps == 0:
        return np.empty(0, target._np)
    if steps == 1:  # PyTorch fills with the power computed in double
        power = np.full(1, np.power(np.float64(base), start))
        return (power.astype(np.float32) if target in (dt.float16, dt.bfloat16) else power).astype(target._np)
    if target._category == dt._COMPLEX:
        return np.power(target._np.type(base), _complex_spaced(start, end, steps, target)).astype(target._np)
    # PyTorch: the ends in the result type, the exponents and the powers in double.
    if target._category == dt._INT:
        first, last = _as_type(start, target), _as_type(end, target)
        span = last - first
    else:
        kind = target._np.type
        if target in (dt.float16, dt.bfloat16):  # C++ converts double to half through float
            start, end = np.float32(start), np.float32(end)
        first, last = kind(start), kind(end)
        span = last - first
    step = float(span) / (steps - 1)
    index = np.arange(steps)
    exponents = np.where(index < steps // 2, float(first) + step * index,
                         float(last) - step * (steps - index - 1))
    powers = _power(float(base), exponents)
    if target in (dt.float16, dt.bfloat16):
        powers = powers.astype(np.float32)  # through float again: rounded twice, as in C++
    with np.errstate(invalid="ignore", over="ignore"):  # inf/nan into an integer type, as C casts do
        return powers.astype(target._np)


def _power(base: float, exponents: np.ndarray) -> np.ndarray:
    """``base ** exponents`` in double, rounded as C's ``pow`` (NumPy's SIMD version can be 1 ulp off)."""
    try:
        return np.array([math.pow(base, x) for x in exponents.tolist()], np.float64)
    except (ValueError, OverflowError):  # nan or inf somewhere: NumPy's answer is the same there
        with np.errstate(all="ignore"):
            return np.power(base, exponents)


def _triangle_dtype(name: str, row: int, col: int, dtype) -> dt.dtype:
    for what, value in (("row", row), ("col", col)):
        if value < 0:
            raise RuntimeError(f"{what} must be non-negative, got{value}")
    target = resolve_dtype(dtype) or dt.int64
    if target not in (dt.int32, dt.int64):
        raise not_implemented(name, target)
    return target


def _triangle_indices(numpy_indices, name: str, row: int, col: int, offset: int, dtype) -> np.ndarray:
    target = _triangle_dtype(name, row, col, dtype)
    rows, columns = numpy_indices(row, offset, col)
    return np.stack([rows, columns]).astype(target._np)


@op(meta=_triangle_meta(upper=False),
    errors=(Sample((-1, 3)), Sample((3, 3), {"dtype": dt.float32})),
    factory=True, samples=(Sample((3, 3)), Sample((3, 4, 1)), Sample((2, 2), {"dtype": dt.int32}),
                           Sample((0, 3)), Sample((4, 2, -1))), schema={"dtype": "ScalarType?=4"})
def tril_indices(row: int, col: int, offset: int = 0, *, dtype: dt.dtype | None = None, device=None,
                 layout=None) -> Tensor:
    """The row and column indices (a 2 x N tensor) of the lower triangle of a ``row`` x ``col``
    matrix, on and below diagonal ``offset``, in row-major order.

    >>> import tensormodes as tm
    >>> tm.tril_indices(2, 2)
    tensor([[0, 1, 1],
            [0, 0, 1]])
    """
    check_device(device)
    return _triangle_indices(np.tril_indices, "tril_indices", row, col, offset, dtype)


@op(meta=_triangle_meta(upper=True),
    errors=(Sample((3, -2)),),
    factory=True, samples=(Sample((3, 3)), Sample((3, 4, -1)), Sample((2, 2), {"dtype": dt.int32}),
                           Sample((0, 3)), Sample((4, 2, 1))), schema={"dtype": "ScalarType?=4"})
def triu_indices(row: int, col: int, offset: int = 0, *, dtype: dt.dtype | None = None, device=None,
                 layout=None) -> Tensor:
    """The row and column indices (a 2 x N tensor) of the upper triangle of a ``row`` x ``col``
    matrix, on and above diagonal ``offset``, in row-major order.

    >>> import tensormodes as tm
    >>> tm.triu_indices(2, 2)
    tensor([[0, 0, 1],
            [0, 1, 1]])
    """
    check_device(device)
    return _triangle_indices(np.triu_indices, "triu_indices", row, col, offset, dtype)


@op(meta=rule(_eye_meta),
    errors=(Sample((-1,)), Sample((2, -3)), Sample((2.5,))),
    factory=True, out=True, samples=(Sample((3,)), Sample((2, 4), {"dtype": dt.int64}), Sample((0,)),
                                     Sample((3, 1), {"dtype": dt.bool}), Sample((2,), {"m": 3})),
    aten={"eye.default": ("m",), "eye.m": ("m: SymInt=",)},
    schema={"n": "SymInt"})
def eye(n: int, m: int | None = None, *, dtype: dt.dtype | None = None, layout=None, device=None,
        requires_grad: bool = False) -> Tensor:
    """Returns a 2-D tensor with ones on the diagonal and zeros elsewhere (``n`` rows, ``m`` columns).

    >>> import tensormodes as tm
    >>> tm.eye(2, 3, dtype=tm.int64)
    tensor([[1, 0, 0],
            [0, 1, 0]])
    """
    check_device(device)
    return np.eye(*_eye_shape(n, m), dtype=_target_np(dtype))


def _eye_shape(n, m) -> tuple[int, int]:
    for name, value in (("n", n), ("m", m)):
        if value is None:
            continue
        if not _is_int_like(value):
            raise TypeError(f"eye(): argument '{name}' (position {1 if name == 'n' else 2}) must be int, "
                            f"not {type(value).__name__}")
        if operator.index(value) < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {operator.index(value)}")
    n = operator.index(n)
    return n, n if m is None else operator.index(m)
