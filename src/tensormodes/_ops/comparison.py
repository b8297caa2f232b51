"""Comparisons and selection: ``eq`` ... ``ge``, ``maximum`` / ``minimum`` / ``clamp``, ``where``,
closeness (``isclose``, ``allclose``, ``equal``) and the classification of floats (``isnan``,
``isinf``, ``signbit`` ...); logical and bitwise ops are in ``logical``.

Ops with boolean or integer results are ``differentiable=False``; selections pass the gradient to
the operand chosen. Each op's gradient formula sits just above it.
"""
# Parameters carry PyTorch's names (input, min, max), which shadow builtins by design.
# ruff: noqa: A002

from __future__ import annotations

import warnings
from numbers import Number

import numpy as np

from .. import _dtype as dt
from .._memory_format import strided
from ._pointwise import (
    _ND,
    _as,
    _check_representable,
    _in,
    _invalid_arguments,
    _is_integral,
    _opmath,
    _raise_broadcast_error,
    _unsupported,
)
from ._samples import BF16, BOOL, C64, COLUMN, F16, F64, I23, I32, M23, ROW, SCALAR_F64, U8
from .common import (
    HALF_TYPES,
    PLAIN_FLOATS,
    dispatch_listens,
    dtype_of,
    is_tensor,
    not_implemented,
    operand_dtype,
    ops,
    overload_node,
    quiet,
    scalar_type_name,
    zero_where,
)
from .meta_rules import (
    MetaRule,
    broadcasting,
    checked_data_dependent,
    data_dependent,
    elementwise,
    pointwise,
    probed,
)
from .registry import OWN, Dunder, Sample, Tensor, TensorSpec, alias, op


def _no_special_values(input: np.ndarray, fill: bool) -> np.ndarray | None:
    """For integer and bool tensors (which hold no NaN or inf): a constant mask."""
    if input.dtype.kind in "biu":
        return np.full(input.shape, fill)
    return None


@op(meta=elementwise, differentiable=False, method=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((C64,)), Sample((BF16,))),
    tags=("core", "pointwise"))
def isnan(input: Tensor) -> Tensor:
    """A bool tensor: True where ``input`` is NaN.

    >>> import tensormodes as tm
    >>> from math import nan
    >>> tm.isnan(tm.tensor([1.0, nan])).tolist()
    [False, True]
    """
    mask = _no_special_values(input, False)
    return np.asarray(np.isnan(input)) if mask is None else mask


@op(meta=elementwise, differentiable=False, method=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((C64,)), Sample((F16,))),
    tags=("core", "pointwise"))
def isinf(input: Tensor) -> Tensor:
    """A bool tensor: True where ``input`` is positive or negative infinity.

    >>> import tensormodes as tm
    >>> from math import inf
    >>> tm.isinf(tm.tensor([1.0, -inf])).tolist()
    [False, True]
    """
    mask = _no_special_values(input, False)
    return np.asarray(np.isinf(input)) if mask is None else mask


def _isfinite_decomposition(input):
    """PyTorch's composite ``isfinite``: ``ones_like`` (bool) for integers and bools; for floats
    ``(x == x) * (x.abs() != inf)`` (``abs``, ``ne.Scalar``, ``eq.Tensor``, ``mul.Tensor``, in the order
    PyTorch's C++ evaluates them); for complex numbers both parts' masks, the second and-ed into the
    first in place (``bitwise_and_``)."""
    if not is_tensor(input):
        return NotImplemented
    aten = ops.ops.aten
    if not (input.is_floating_point() or input.is_complex()):
        return aten.ones_like.default(input, dtype=dt.bool, memory_format=ops.preserve_format)
    if input.is_complex():
        return _isfinite_decomposition(input.real).bitwise_and_(_isfinite_decomposition(input.imag))
    finite = aten.ne.Scalar(aten.abs.default(input), float("inf"))
    return aten.mul.Tensor(aten.eq.Tensor(input, input), finite)


@op(meta=elementwise, differentiable=False, method=True, decompose=_isfinite_decomposition,
    samples=(Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((C64,)), Sample((BOOL,))),
    tags=("pointwise",))
def isfinite(input: Tensor) -> Tensor:
    """A bool tensor: True where ``input`` is neither infinite nor NaN.

    >>> import tensormodes as tm
    >>> from math import inf, nan
    >>> tm.isfinite(tm.tensor([1.0, inf, nan])).tolist()
    [True, False, False]
    """
    mask = _no_special_values(input, True)
    return np.asarray(np.isfinite(input)) if mask is None else mask


def _truth(x):
    """``x != 0`` as a bool array (or Python bool): the truth value logical ops use."""
    if type(x) is _ND:
        return x if x.dtype.kind == "b" else x != 0
    return bool(x)


@op(meta=elementwise, differentiable=False, method=True, inplace=True, out=True,
    samples=(Sample((M23,)), Sample((I23,)), Sample((BOOL,)), Sample((SCALAR_F64,)), Sample((C64,))),
    tags=("core", "pointwise"))
def logical_not(input: Tensor) -> Tensor:
    """A bool tensor: True where ``input`` is zero.

    >>> import tensormodes as tm
    >>> tm.logical_not(tm.tensor([0, 3])).tolist()
    [True, False]
    """
    return np.asarray(np.logical_not(_truth(input)))


@op(errors=(Sample((M23,)),),
    meta=elementwise, differentiable=False, method=True, inplace=True, out=True, dunders=(Dunder("__invert__", OWN),),
    samples=(Sample((I23,)), Sample((BOOL,)), Sample((U8,)), Sample((TensorSpec((), "int32"),))),
    tags=("core", "pointwise"))
def bitwise_not(input: Tensor) -> Tensor:
    """The bitwise NOT of an integer or bool tensor (logical NOT for bool).

    >>> import tensormodes as tm
    >>> (~tm.tensor([0, 5])).tolist(), (~tm.tensor([True, False])).tolist()
    ([-1, -6], [False, True])
    """
    d = dtype_of(input)
    if not _is_integral(d):
        raise not_implemented("bitwise_not_cpu", d)
    return np.invert(input)


# -- clamping --------------------------------------------------------------------------------

def _clamp(name: str, input: np.ndarray, low, high) -> np.ndarray:
    """``min(max(input, low), high)``; the bounds are both tensors-or-None or both
    numbers-or-None, as PyTorch's two overloads require."""
    if low is None and high is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    bounds = [b for b in (low, high) if b is not None]
    tensors = [type(b) is _ND for b in bounds]
    if any(tensors) and not all(tensors):
        raise _invalid_arguments(name, input, *bounds)
    d = operand_dtype(input, *bounds)
    if input.dtype.kind == "c" and (name == "clamp" or not any(tensors)):
        raise NotImplementedError("clamp is not supported for complex types")
    if any(tensors) and (d.is_complex or d is dt.bool and len(bounds) == 2):
        raise _unsupported("clamp_cpu" if len(bounds) == 2 else "maximum_cpu" if high is None else "minimum_cpu",
                           d, input, *bounds)
    if d.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    if not any(tensors):
        if d is dt.bool:
            kernel = "clamp_scalar_cpu" if len(bounds) == 2 else "clamp_min_scalar_cpu" if high is None \
                else "clamp_max_scalar_cpu"
            raise not_implemented(kernel, d)
        for bound in bounds:
            _check_representable(bound, d)
    with quiet():
        result = _in(input, d)
        try:
            if low is not None:
                result = np.maximum(result, _in(low, d))
            if high is not None:
                result = np.minimum(result, _in(high, d))
        except ValueError:
            _raise_broadcast_error(input, *bounds)
            raise
        return _as(result, d)


_CLAMP_SAMPLES = (
    Sample((M23, -0.5, 0.5)), Sample((M23,), {"min": 0.0}), Sample((M23,), {"max": 0.5}),
    Sample((I23, 0.5)), Sample((I23, -2, 2)), Sample((M23, ROW, COLUMN)),
    Sample((M23,), {"max": ROW}), Sample((SCALAR_F64, 0.0, 1.0)), Sample((F16, -1.0, 1.0)),
    Sample((BOOL, BOOL)), Sample((BOOL, 0, 1)),
)


def _clamp_grad(grad, input, min, max, needs_input_grad):  # noqa: A002 - the op's parameter names
    """Gradient flows to whichever of ``input``, ``min`` and ``max`` the result came from
    (to ``max`` where ``min > max``, as the result does). When the dispatch level listens, the
    masks and zeros are PyTorch's (``clamp_backward``, ``clamp_backward_min_max``), op for op;
    else the same values more cheaply (a number zero, ``&``)."""
    listens = dispatch_listens(grad)
    input_grad = min_grad = max_grad = None
    zero = 0
    if needs_input_grad[0]:
        # PyTorch's formulas make the zero explicitly
        zero = ops.scalar_tensor(0.0, dtype=grad.dtype, device=grad.device) if listens else 0
        if min is None:
            inside = input <= max
        elif max is None:
            inside = input >= min
        elif not listens:
            inside = (input >= min) & (input <= max)
        else:
            at_least_min = input >= min
            # PyTorch's scalar-bound form combines in place (a fresh mask), its tensor-bound one not
            inside = (at_least_min.logical_and(input <= max) if is_tensor(min) or is_tensor(max)
                      else at_least_min.logical_and_(input <= max))
        input_grad = grad.where(inside, zero)
    if not is_tensor(min) and not is_tensor(max):
        return input_grad, None, None
    if listens and (needs_input_grad[1] or needs_input_grad[2]):  # the bounds' formula makes its own
        zero = ops.scalar_tensor(0.0, dtype=grad.dtype, device=grad.device)
    if min is not None and needs_input_grad[1]:
        below = input < min
        min_grad = grad.where(below if max is None else below.logical_and(min < max), zero)
    if max is not None and needs_input_grad[2]:
        above = input > max
        max_grad = grad.where(above if min is None else above.logical_or(max < min), zero)
    return input_grad, min_grad, max_grad


_CLAMP_NODE = overload_node("clamp#1", "clamp", 1, 2)


@op(errors=(Sample((M23,)), Sample((C64, 0.0, 1.0)), Sample((M23, ROW, 1.0))),
    meta=elementwise, grad=_clamp_grad, node=_CLAMP_NODE, method=True, inplace=True, inplace_function=True,
    out=True, samples=_CLAMP_SAMPLES,
    aten={"clamp.default": ("min: Scalar?", "max: Scalar?"), "clamp.Tensor": ()}, tags=("core", "pointwise"))
def clamp(input: Tensor, min: Tensor | Number | None = None,  # noqa: A002 - PyTorch's names
          max: Tensor | Number | None = None) -> Tensor:  # noqa: A002
    """Clamps each element into ``[min, max]`` (either bound may be omitted; bounds are
    both numbers or both tensors, which broadcast). Where ``min > max`` the result is ``max``.

    >>> import tensormodes as tm
    >>> tm.clamp(tm.tensor([-2, 0, 2]), min=-1, max=1).tolist()
    [-1, 0, 1]
    >>> tm.tensor([0.5, 3.0]).clamp(max=1).tolist()
    [0.5, 1.0]
    """
    return _clamp("clamp", input, min, max)


clip = alias("clip", of="clamp", method=True, inplace=True, inplace_function=True,
             samples=_CLAMP_SAMPLES[:6],
             doc="""Alias for ``clamp``.

    >>> import tensormodes as tm
    >>> tm.clip(tm.tensor([-2, 0, 2]), -1, 1).tolist()
    [-1, 0, 1]
    """)


def _clamp_min_grad(grad, input, min, needs_input_grad):  # noqa: A002 - the op's parameter name
    return _clamp_grad(grad, input, min, None, (*needs_input_grad, False))[:2]


@op(errors=(Sample((C64, 0.0)), Sample((M23, TensorSpec((3, 2))))),
    meta=elementwise, grad=_clamp_min_grad, node=overload_node("clamp_min", "clamp_min#1", 1), method=True,
    inplace=True, inplace_function=True, out=True,
    samples=(Sample((M23, 0.0)), Sample((I23, 0.5)), Sample((M23, ROW)), Sample((SCALAR_F64, 0))),
    aten={"clamp_min.default": ("min: Scalar",), "clamp_min.Tensor": ()}, tags=("pointwise",))
def clamp_min(input: Tensor, min: Tensor | Number) -> Tensor:  # noqa: A002 - PyTorch's name
    """``max(input, min)`` elementwise.

    >>> import tensormodes as tm
    >>> tm.clamp_min(tm.tensor([-2, 2]), 0).tolist()
    [0, 2]
    """
    return _clamp("clamp_min", input, min, None)


def _clamp_max_grad(grad, input, max, needs_input_grad):  # noqa: A002 - the op's parameter name
    input_grad, _, max_grad = _clamp_grad(grad, input, None, max, (needs_input_grad[0], False, needs_input_grad[1]))
    return input_grad, max_grad


@op(errors=(Sample((C64, 0.0)), Sample((BOOL, True))),
    meta=elementwise, grad=_clamp_max_grad, node=overload_node("clamp_max", "clamp_max#1", 1), method=True,
    inplace=True, inplace_function=True, out=True,
    samples=(Sample((M23, 0.0)), Sample((I23, 0.5)), Sample((M23, ROW)), Sample((SCALAR_F64, 0))),
    aten={"clamp_max.default": ("max: Scalar",), "clamp_max.Tensor": ()}, tags=("pointwise",))
def clamp_max(input: Tensor, max: Tensor | Number) -> Tensor:  # noqa: A002 - PyTorch's name
    """``min(input, max)`` elementwise.

    >>> import tensormodes as tm
    >>> tm.clamp_max(tm.tensor([-2, 2]), 0).tolist()
    [-2, 0]
    """
    return _clamp("clamp_max", input, None, max)


def _extremum(ufunc, name: str, input, other) -> np.ndarray:
    d = operand_dtype(input, other)
    if d.is_complex:
        _raise_broadcast_error(input, other)
        raise RuntimeError(f"{name} not implemented for complex tensors.")
    with quiet():  # bfloat16 NaNs raise NumPy's invalid flag
        try:
            return _as(ufunc(_in(input, d), _in(other, d)), d)
        except ValueError:
            _raise_broadcast_error(input, other)
            raise


_EXTREMUM_SAMPLES = (Sample((M23, M23)), Sample((M23, ROW)), Sample((I23, I32)), Sample((BOOL, BOOL)),
                     Sample((F16, BF16)), Sample((SCALAR_F64, I23)), Sample((U8, I23)))


def extremum_grad(grad, input, other, larger: bool, needs=(True, True)):
    """The gradients of ``maximum`` (``larger``) / ``minimum``: ties split the gradient, and only
    the operand that lost for sure gets none, so a NaN on either side passes it to both, as in
    PyTorch (masks fill zeros; multiplying by them would turn an infinite gradient into NaN).
    PyTorch's formula computes the shared part once per operand wanting a gradient; computed once
    for both unless the dispatch level listens (the same values)."""
    if needs[0] and needs[1] and not dispatch_listens(grad):
        shared = (grad / 2).where(input == other, grad)
        input_lost, other_lost = (input < other, input > other) if larger else (input > other, input < other)
        return shared.masked_fill(input_lost, 0), shared.masked_fill(other_lost, 0)
    # PyTorch's order: other's gradient first, each operand's mask after its shared part
    input_grad = other_grad = None
    if needs[1]:
        other_grad = (grad / 2).where(input == other, grad)
        other_grad.masked_fill_(input > other if larger else input < other, 0)
    if needs[0]:
        input_grad = (grad / 2).where(input == other, grad)
        input_grad.masked_fill_(input < other if larger else input > other, 0)
    return input_grad, other_grad


def _maximum_grad(grad, input, other, needs_input_grad):
    return extremum_grad(grad, input, other, True, needs_input_grad)


@op(errors=(Sample((C64, C64)), Sample((M23, TensorSpec((3, 2))))),
    meta=elementwise, grad=_maximum_grad, method=True, out=True, ufunc=np.maximum, samples=_EXTREMUM_SAMPLES,
    tags=("core", "pointwise"))
def maximum(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise maximum of ``input`` and ``other`` (NaN if either is NaN).

    >>> import tensormodes as tm
    >>> tm.maximum(tm.tensor([1, 5]), tm.tensor([3, 2])).tolist()
    [3, 5]
    """
    return _extremum(np.maximum, "maximum", input, other)


def _minimum_grad(grad, input, other, needs_input_grad):
    return extremum_grad(grad, input, other, False, needs_input_grad)


@op(errors=(Sample((C64, C64)), Sample((M23, TensorSpec((3, 2))))),
    meta=elementwise, grad=_minimum_grad, method=True, out=True, ufunc=np.minimum, samples=_EXTREMUM_SAMPLES,
    tags=("core", "pointwise"))
def minimum(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise minimum of ``input`` and ``other`` (NaN if either is NaN).

    >>> import tensormodes as tm
    >>> tm.minimum(tm.tensor([1, 5]), tm.tensor([3, 2])).tolist()
    [1, 2]
    """
    return _extremum(np.minimum, "minimum", input, other)


_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def _where(condition: np.ndarray, input, other) -> np.ndarray:
    if (type(input) is _ND and input.dtype in PLAIN_FLOATS and (type(other) is float or type(other) is int)
            and condition.dtype.kind == "b"):
        # The common ``grad.where(mask, 0)`` of gradient formulas: the number takes the
        # array's dtype, and casting it cannot overflow once it is representable.
        _check_representable(other, dtype_of(input))
        try:
            return np.where(condition, input, np.asarray(other, dtype=input.dtype))
        except ValueError:
            _raise_broadcast_error(condition, input, other)
            raise
    if condition.dtype.kind != "b":
        if condition.dtype != np.uint8:
            raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor with dtype "
                               f"{scalar_type_name(dtype_of(condition))}")
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and will be removed "
                      "in a future version of PyTorch. Use a boolean condition instead.", UserWarning, stacklevel=4)
        condition = condition.astype(np.bool_)
    d = operand_dtype(input, other)
    if d._np not in HALF_TYPES:  # PyTorch converts where's numbers to half types unchecked
        _check_representable(input, d)
        _check_representable(other, d)
    with quiet():
        try:
            return _as(np.where(condition, _as(_in(input, d), d), _as(_in(other, d), d)), d)
        except ValueError:
            _raise_broadcast_error(condition, input, other)
            raise


def _where_grad(grad, condition, needs_input_grad):
    # PyTorch's formulas: where(condition, grad, 0) and where(condition, 0, grad), each only when wanted.
    keep = condition if condition.dtype is dt.bool else condition != 0  # uint8 conditions
    return (None, grad.where(keep, 0) if needs_input_grad[1] else None,
            zero_where(keep, grad) if needs_input_grad[2] else None)


_where_operands = broadcasting("condition", "input", "other")


def _where_meta_compute(opdef, args, kwargs):
    bound = opdef.signature.bind(*args, **kwargs)
    if bound.arguments.get("input") is None and bound.arguments.get("other") is None:
        return data_dependent(opdef, args, kwargs)  # where(condition) is nonzero(condition)
    return _where_operands(opdef, args, kwargs)


_where_meta = MetaRule(_where_meta_compute, "where")


def _where_decomposition(condition, input=None, other=None):
    """``where(condition)`` is PyTorch's composite ``nonzero(condition, as_tuple=True)`` (aten's
    ``nonzero`` and ``unbind``), so a dispatch mode never sees ``where.self`` without operands
    (and a fake tensor names ``nonzero`` as needing data); the three-operand form is the op."""
    if input is None and other is None:
        return ops.nonzero(condition, as_tuple=True)
    if input is None or other is None or (is_tensor(input) and is_tensor(other)):
        return NotImplemented
    # a Python number operand becomes a 0-d tensor of the result's dtype (``other`` first), and
    # the tensor operand is cast to it, as PyTorch's overloads for numbers do
    dtype = operand_dtype(*(np.empty((0,) * v.dim(), v.dtype._np) if is_tensor(v) else v for v in (input, other)))
    # (ATen's at::scalar_tensor(value, options): the options, not the Python binding's pin_memory=False)
    made = {name: ops.ops.aten.scalar_tensor.default(value, dtype=dtype, layout=strided, device=condition.device)
            for name, value in (("other", other), ("input", input)) if not is_tensor(value)}
    input, other = (made.get(name, value.to(dtype) if is_tensor(value) else value)
                    for name, value in (("input", input), ("other", other)))
    return ops.where(condition, input, other)


@op(errors=(Sample((M23, M23, M23)), Sample((BOOL, M23, TensorSpec((3, 2)))), Sample((BOOL, M23))),
    meta=_where_meta, grad=_where_grad, out=True, decompose=_where_decomposition,
    samples=(Sample((BOOL, M23, M23)), Sample((BOOL, ROW, 0.0)), Sample((BOOL, 1, 2.5)), Sample((BOOL, 1, 2)),
             Sample((BOOL, I23, F16)), Sample((TensorSpec((), "bool"), I32, SCALAR_F64)),
             Sample((BOOL,), {"input": COLUMN, "other": ROW}), Sample((BOOL,)),
             Sample((TensorSpec((), "bool"),))),
    aten={"where.self": ("out-pointwise",)},
    schema={"other": "Tensor=", "input": "Tensor self="}, tags=("core", "pointwise"))
def where(condition: Tensor, input: Tensor | Number | None = None, other: Tensor | Number | None = None) -> Tensor:
    """Elements of ``input`` where ``condition`` holds, else of ``other`` (numbers allowed;
    the result broadcasts and takes their promoted dtype). ``where(condition)`` alone is
    ``nonzero(condition, as_tuple=True)``.

    >>> import tensormodes as tm
    >>> c = tm.tensor([True, False, True])
    >>> tm.where(c, tm.tensor([1, 2, 3]), 0).tolist()
    [1, 0, 3]
    >>> [t.tolist() for t in tm.where(c)]
    [[0, 2]]
    """
    if input is None and other is None:
        return tuple(np.asarray(i, dtype=np.int64) for i in np.nonzero(np.atleast_1d(condition)))
    if input is None or other is None:
        raise _invalid_arguments("where", condition, *(x for x in (input, other) if x is not None))
    return _where(condition, input, other)


def _where_method_grad(grad, condition, needs_input_grad):
    _, input_grad, other_grad = _where_grad(grad, condition, (False, needs_input_grad[0], needs_input_grad[2]))
    return input_grad, None, other_grad


@op(errors=(Sample((M23, M23, M23)), Sample((M23, BOOL, TensorSpec((3, 2))))),
    meta=broadcasting("condition", "input", "other"),
    grad=_where_method_grad, function=False, method="where", name="where_method",
    samples=(Sample((M23, BOOL, M23)), Sample((I23, BOOL, 2.5)), Sample((ROW, BOOL, COLUMN))),
    aten="where.self", schema={"(order)": "condition self other"})
def where_method(input: Tensor, condition: Tensor, other: Tensor | Number) -> Tensor:
    """``tensormodes.where(condition, self, other)`` (the method form puts ``self`` in the middle).

    >>> import tensormodes as tm
    >>> tm.tensor([1, 2, 3]).where(tm.tensor([True, False, True]), 0).tolist()
    [1, 0, 3]
    """
    return _where(condition, input, other)


# -- comparisons -----------------------------------------------------------------------------

def _compare(ufunc, name: str, input, other, ordered: bool) -> np.ndarray:
    if type(input) is _ND and input.dtype == np.int64 and type(other) is int and _INT64_MIN <= other <= _INT64_MAX:
        # Class targets against an index (``target != ignore_index``): exact in NumPy, no promotion to work out.
        return np.asarray(ufunc(input, other))
    d = operand_dtype(input, other)
    if ordered and d.is_complex:
        raise _unsupported(f"{name}_cpu", d, input, other)
    with quiet():  # bfloat16 NaNs raise NumPy's invalid flag
        try:
            return np.asarray(ufunc(_in(input, d), _in(other, d)))
        except ValueError:
            _raise_broadcast_error(input, other)
            raise


def _comparison_samples(ordered: bool) -> tuple[Sample, ...]:
    samples = (Sample((M23, M23)), Sample((M23, 0.0)), Sample((I23, ROW)), Sample((I23, 2)),
               Sample((I23, 1.5)), Sample((BOOL, BOOL)), Sample((F16, BF16)), Sample((SCALAR_F64, I32)),
               Sample((U8, -1)))
    return samples if ordered else (*samples, Sample((C64, C64)))


@op(errors=(Sample((M23, TensorSpec((3, 2)))),),
    meta=elementwise,
    differentiable=False, method=True, inplace=True, out=True, ufunc=np.equal, dunders=(Dunder("__eq__", OWN),),
    samples=(*_comparison_samples(False), Sample((I23, TensorSpec((2, 3), "int64", -5, 5)))),
    aten={"eq.Tensor": ("inplace-pointwise",), "eq.Scalar": ("inplace-pointwise",)}, tags=("core", "pointwise"))
def eq(input: Tensor, other: Tensor | Number) -> Tensor:
    """A bool tensor: True where ``input == other``.

    >>> import tensormodes as tm
    >>> (tm.tensor([1, 2, 3]) == 2).tolist()
    [False, True, False]
    """
    return _compare(np.equal, "eq", input, other, False)


@op(errors=(Sample((M23, TensorSpec((3, 2)))),),
    meta=elementwise,
    differentiable=False, method=True, inplace=True, out=True, ufunc=np.not_equal, dunders=(Dunder("__ne__"),),
    samples=_comparison_samples(False),
    aten={"ne.Tensor": ("inplace-pointwise",), "ne.Scalar": ("inplace-pointwise",)}, tags=("core", "pointwise"))
def ne(input: Tensor, other: Tensor | Number) -> Tensor:
    """A bool tensor: True where ``input != other``.

    >>> import tensormodes as tm
    >>> (tm.tensor([1, 2, 3]) != 2).tolist()
    [True, False, True]
    """
    return _compare(np.not_equal, "ne", input, other, False)


@op(errors=(Sample((C64, C64)), Sample((M23, TensorSpec((3, 2))))),
    meta=elementwise,
    differentiable=False, method=True, inplace=True, out=True, ufunc=np.less, dunders=(Dunder("__lt__"),),
    samples=_comparison_samples(True),
    aten={"lt.Tensor": ("inplace-pointwise",), "lt.Scalar": ("inplace-pointwise",)}, tags=("core", "pointwise"))
def lt(input: Tensor, other: Tensor | Number) -> Tensor:
    """A bool tensor: True where ``input < other``.

    >>> import tensormodes as tm
    >>> (tm.tensor([1, 2, 3]) < 2).tolist()
    [True, False, False]
    """
    return _compare(np.less, "lt", input, other, True)


@op(errors=(Sample((C64, C64)),),
    meta=elementwise,
    differentiable=False, method=True, inplace=True, out=True, ufunc=np.less_equal, dunders=(Dunder("__le__"),),
    samples=_comparison_samples(True),
    aten={"le.Tensor": ("inplace-pointwise",), "le.Scalar": ("inplace-pointwise",)}, tags=("core", "pointwise"))
def le(input: Tensor, other: Tensor | Number) -> Tensor:
    """A bool tensor: True where ``input <= other``.

    >>> import tensormodes as tm
    >>> (tm.tensor([1, 2, 3]) <= 2).tolist()
    [True, True, False]
    """
    return _compare(np.less_equal, "le", input, other, True)


@op(errors=(Sample((C64, 0.5)),),
    meta=elementwise,
    differentiable=False, method=True, inplace=True, out=True, ufunc=np.greater, dunders=(Dunder("__gt__"),),
    samples=_comparison_samples(True),
    aten={"gt.Tensor": ("inplace-pointwise",), "gt.Scalar": ("inplace-pointwise",)}, tags=("core", "pointwise"))
def gt(input: Tensor, other: Tensor | Number) -> Tensor:
    """A bool tensor: True where ``input > other``.

    >>> import tensormodes as tm
    >>> (tm.tensor([1, 2, 3]) > 2).tolist()
    [False, False, True]
    """
    return _compare(np.greater, "gt", input, other, True)


@op(errors=(Sample((M23, TensorSpec((3, 2)))),),
    meta=elementwise,
    differentiable=False, method=True, inplace=True, out=True, ufunc=np.greater_equal, dunders=(Dunder("__ge__"),),
    samples=_comparison_samples(True),
    aten={"ge.Tensor": ("inplace-pointwise",), "ge.Scalar": ("inplace-pointwise",)}, tags=("core", "pointwise"))
def ge(input: Tensor, other: Tensor | Number) -> Tensor:
    """A bool tensor: True where ``input >= other``.

    >>> import tensormodes as tm
    >>> (tm.tensor([1, 2, 3]) >= 2).tolist()
    [False, True, True]
    """
    return _compare(np.greater_equal, "ge", input, other, True)


# -- closeness and equality ------------------------------------------------------------------

def _close(input: np.ndarray, other: np.ndarray, rtol: float, atol: float, equal_nan: bool) -> np.ndarray:
    """PyTorch's isclose: equal, or (when finite) ``|input - other| <= atol + |rtol * other|``."""
    d = dtype_of(input)
    if input.dtype != other.dtype:
        raise RuntimeError(f"{scalar_type_name(d)} did not match {scalar_type_name(dtype_of(other))}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")
    with quiet():
        try:
            close = np.equal(input, other)
        except ValueError:
            _raise_broadcast_error(input, other)
            raise
        if equal_nan and not _is_integral(d):
            close |= np.isnan(input) & np.isnan(other)
        if rtol == 0 and atol == 0:
            return np.asarray(close)
        a, b = input, other
        if _is_integral(d):
            d = dt.get_default_dtype()
            a, b = a.astype(d._np), b.astype(d._np)
        # Each step rounds to its dtype, as PyTorch's tensor expressions do (integers
        # compare in the default float dtype, so differences cannot wrap around).
        real = d.to_real()
        tolerance = np.absolute(_as(np.multiply(b.astype(_opmath(d)._np, copy=False), rtol), d))
        allowed = _as(np.add(tolerance.astype(_opmath(real)._np, copy=False), atol), real)
        error = np.absolute(_as(np.subtract(a, b), d))
        close |= np.isfinite(error) & (error <= allowed)
    return np.asarray(close)


@op(errors=(Sample((M23, F64)), Sample((M23, M23), {"rtol": -1.0}), Sample((M23, TensorSpec((3, 2))))),
    meta=elementwise, differentiable=False, method=True,
    samples=(Sample((M23, M23)), Sample((M23, ROW), {"rtol": 2.0, "atol": 0.5}), Sample((I23, I23)),
             Sample((BOOL, BOOL)), Sample((F16, F16), {"atol": 1.0}), Sample((SCALAR_F64, SCALAR_F64)),
             Sample((C64, C64), {"equal_nan": True}), Sample((I23, I23), {"atol": 2, "rtol": 0})))
def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """A bool tensor: True where ``|input - other| <= atol + rtol * |other|`` (or both are
    equal, infinities included; NaNs only with ``equal_nan``). The dtypes must match.

    >>> import tensormodes as tm
    >>> tm.isclose(tm.tensor([1.0, 2.0]), tm.tensor([1.0 + 1e-9, 2.1])).tolist()
    [True, False]
    >>> from math import nan
    >>> tm.isclose(tm.tensor([nan]), tm.tensor([nan]), equal_nan=True).tolist()
    [True]
    """
    return _close(input, other, rtol, atol, equal_nan)


@op(errors=(Sample((M23, F64)), Sample((M23, M23), {"atol": -1.0}), Sample((M23, TensorSpec((3, 2))))),
    meta=checked_data_dependent(pointwise), differentiable=False, method=True,
    samples=(Sample((M23, M23)), Sample((M23, ROW), {"rtol": 10.0, "atol": 5.0}), Sample((I23, I23)),
             Sample((F64, F64), {"equal_nan": True}), Sample((SCALAR_F64, SCALAR_F64))),
    tags=("data_dependent_output",))
def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """True if ``isclose(input, other, rtol, atol, equal_nan)`` holds everywhere.

    >>> import tensormodes as tm
    >>> tm.allclose(tm.tensor([1.0, 2.0]), tm.tensor([1.0, 2.0 + 1e-7]))
    True
    """
    return bool(_close(input, other, rtol, atol, equal_nan).all())


def _equal_meta(opdef, args, kwargs):
    # The kernel answers from the shapes alone when they differ (or hold no elements).
    input, other = opdef.signature.bind(*args, **kwargs).args
    if input.shape != other.shape:
        return False
    if input.size == 0:
        return True
    return data_dependent(opdef, args, kwargs)


@op(meta=MetaRule(_equal_meta, "equal"), differentiable=False, method=True,
    samples=(Sample((M23, M23)), Sample((I23, I23)), Sample((M23, ROW)), Sample((SCALAR_F64, SCALAR_F64)),
             Sample((BOOL, TensorSpec((2, 3), "int64", 0, 1)))), tags=("data_dependent_output", "pointwise"))
def equal(input: Tensor, other: Tensor) -> bool:
    """True if ``input`` and ``other`` have the same shape and elements (NaN is not equal to itself).

    >>> import tensormodes as tm
    >>> tm.equal(tm.tensor([1, 2]), tm.tensor([1.0, 2.0])), tm.equal(tm.tensor([1]), tm.tensor([1, 1]))
    (True, False)
    """
    if input.shape != other.shape:
        return False
    d = operand_dtype(input, other)
    with quiet():
        return bool(np.array_equal(_in(input, d), _in(other, d)))


@op(meta=probed, differentiable=False,
    samples=(Sample((M23, I23)), Sample((I23, 2.5)), Sample((I32, SCALAR_F64)), Sample((2, 3.0)),
             Sample((True, U8)), Sample((M23, 1j)), Sample((BOOL, BOOL))))
def result_type(tensor: Tensor | Number, other: Tensor | Number) -> dt.dtype:
    """The dtype an arithmetic op on ``tensor`` and ``other`` would produce (PyTorch's promotion).

    >>> import tensormodes as tm
    >>> tm.result_type(tm.tensor([1, 2], dtype=tm.int32), 2.5)
    tensormodes.float32
    >>> tm.result_type(tm.tensor([1], dtype=tm.uint8), tm.tensor(1, dtype=tm.int64))
    tensormodes.uint8
    """
    return operand_dtype(tensor, other)


def _fmax_grad(grad, input, other, needs_input_grad):
    # The chosen operand takes the whole gradient: ``input`` on ties, ``other`` where input is NaN.
    # PyTorch's masks, op for op (each operand's made afresh).
    return _chosen_grads(grad, lambda: (input >= other).logical_or_(other.isnan()), needs_input_grad)


def _chosen_grads(grad, chosen, needs):
    """fmax / fmin's gradients: ``grad`` where ``chosen()`` holds for the input, elsewhere for other.
    PyTorch's formula makes the mask for each operand; one does for both when nothing listens."""
    if not dispatch_listens(grad):
        mask = chosen()
        return (grad.where(mask, 0) if needs[0] else None,
                grad.masked_fill(mask, 0) if needs[1] else None)
    other_grad = grad.masked_fill(chosen(), 0) if needs[1] else None  # first, as PyTorch's
    return grad.masked_fill(chosen().logical_not_(), 0) if needs[0] else None, other_grad


@op(errors=(Sample((C64, C64)), Sample((M23, TensorSpec((3, 2))))),
    meta=elementwise, grad=_fmax_grad, method=True, out=True, ufunc=np.fmax, samples=_EXTREMUM_SAMPLES,
    tags=("pointwise",))
def fmax(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise maximum, ignoring NaN: NaN only where both elements are NaN.

    >>> import tensormodes as tm
    >>> from math import nan
    >>> tm.fmax(tm.tensor([nan, 1.0]), tm.tensor([2.0, nan])).tolist()
    [2.0, 1.0]
    """
    return _extremum(np.fmax, "fmax", input, other)


def _fmin_grad(grad, input, other, needs_input_grad):
    return _chosen_grads(grad, lambda: (input <= other).logical_or_(other.isnan()), needs_input_grad)


@op(errors=(Sample((C64, C64)),),
    meta=elementwise, grad=_fmin_grad, method=True, out=True, ufunc=np.fmin, samples=_EXTREMUM_SAMPLES,
    tags=("pointwise",))
def fmin(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise minimum, ignoring NaN: NaN only where both elements are NaN.

    >>> import tensormodes as tm
    >>> from math import nan
    >>> tm.fmin(tm.tensor([nan, 1.0]), tm.tensor([2.0, nan])).tolist()
    [2.0, 1.0]
    """
    return _extremum(np.fmin, "fmin", input, other)


_PREDICATE_SAMPLES = (Sample((M23,)), Sample((I23,)), Sample((SCALAR_F64,)), Sample((F16,)), Sample((BOOL,)),
                      Sample((U8,)))


def _bool_output(name: str):
    """A written_check: these predicates write only into bool tensors."""

    def check(result: np.ndarray, target: np.ndarray, inplace: bool) -> None:
        if target.dtype != np.bool_:
            raise RuntimeError(f"{name} does not support non-boolean outputs.")

    return check


@op(errors=(Sample((C64,)),),
    meta=elementwise,
    differentiable=False, method=True, out=True, written_check=_bool_output("signbit"), samples=_PREDICATE_SAMPLES,
    tags=("pointwise",))
def signbit(input: Tensor) -> Tensor:
    """A bool tensor: True where the sign bit is set (negative numbers, -0.0, and NaN with the bit).

    >>> import tensormodes as tm
    >>> tm.signbit(tm.tensor([-1.0, -0.0, 0.0, 2.0])).tolist()
    [True, True, False, False]
    """
    kind = input.dtype.kind
    if kind == "c":
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    if kind in "bu":
        return np.zeros(input.shape, np.bool_)
    if kind == "i":
        return np.asarray(input < 0)
    return np.asarray(np.signbit(input))


def _infinity_test(name: str, input: np.ndarray, infinity: float) -> np.ndarray:
    if input.dtype.kind == "c":
        raise RuntimeError(f"{name} does not support complex inputs.")
    mask = _no_special_values(input, False)
    return np.asarray(input == infinity) if mask is None else mask


@op(errors=(Sample((C64,)),),
    meta=elementwise, differentiable=False, method=True, out=True, written_check=_bool_output("isposinf"),
    samples=_PREDICATE_SAMPLES, tags=("pointwise",))
def isposinf(input: Tensor) -> Tensor:
    """A bool tensor: True where ``input`` is positive infinity.

    >>> import tensormodes as tm
    >>> from math import inf
    >>> tm.isposinf(tm.tensor([inf, -inf, 1.0])).tolist()
    [True, False, False]
    """
    return _infinity_test("isposinf", input, np.inf)


@op(errors=(Sample((C64,)),),
    meta=elementwise, differentiable=False, method=True, out=True, written_check=_bool_output("isneginf"),
    samples=_PREDICATE_SAMPLES, tags=("pointwise",))
def isneginf(input: Tensor) -> Tensor:
    """A bool tensor: True where ``input`` is negative infinity.

    >>> import tensormodes as tm
    >>> from math import inf
    >>> tm.isneginf(tm.tensor([inf, -inf, 1.0])).tolist()
    [False, True, False]
    """
    return _infinity_test("isneginf", input, -np.inf)


@op(meta=elementwise, differentiable=False, method=True, samples=_PREDICATE_SAMPLES + (Sample((C64,)),))
def isreal(input: Tensor) -> Tensor:
    """A bool tensor: True where the imaginary part is zero (everywhere for real tensors).

    >>> import tensormodes as tm
    >>> tm.isreal(tm.tensor([1 + 0j, 1j])).tolist()
    [True, False]
    """
    if input.dtype.kind != "c":
        return np.ones(input.shape, np.bool_)
    return np.asarray(input.imag == 0)
