"""Factory ops: tensors from data, filled tensors, ranges and ``*_like`` variants.

Factories take no tensor (except the ``*_like`` ones), so only modes see them;
they are how a tracing mode records constants instead of folding them in.

``zeros`` / ``ones`` / ``empty`` are hot paths: each tries the common call
(int sizes, default dtype, no device) first and falls back to the validating
path only when that attempt does not apply.
"""

from __future__ import annotations

import math
import numbers
import operator
import warnings
from collections.abc import Sequence
from itertools import chain
from numbers import Number

import numpy as np

from .. import _dtype as dt
from .._device import check_compute_device
from ._common import array_of, not_implemented, resolve_dtype, scalar_type_name
from ._meta import MetaArray, MetaRule, copy_of, dense_strides, is_meta_device, rule
from ._registry import Sample, Tensor, TensorSpec, op
from ._samples import M23
from ._shape import storage_span, strided_geometry

_DEFAULT_DTYPE = dt._DEFAULT_DTYPE  # read directly: get_default_dtype() costs a call on the hot path
_np_zeros, _np_empty = np.zeros, np.empty

# PyTorch's ScalarType names, as its "not implemented for 'Long'" messages spell them.
# The C++ element types PyTorch names in "value cannot be converted to type ..." messages.
_CHECKED_TYPE_NAMES = {
    dt.uint8: "uint8_t", dt.int8: "int8_t", dt.int16: "int16_t", dt.int32: "int", dt.int64: "int64_t",
    dt.float32: "float", dt.float64: "double", dt.float16: "double", dt.bfloat16: "double",
}


def parse_size(size: tuple, name: str = "size", op_name: str | None = None) -> tuple[int, ...]:
    """``f(2, 3)``, ``f((2, 3))`` and ``f([2, 3])`` all mean shape ``(2, 3)``.

    ``size`` is the tuple of positional arguments. Dimensions may be anything
    with ``__index__`` (NumPy ints, 0-dim integer tensors), not floats; errors
    are PyTorch's, naming ``op_name`` when given.
    """
    if len(size) == 1 and isinstance(size[0], tuple):  # f(x.shape): checked without the general parsing
        for d in size[0]:
            if type(d) is not int or d < 0:
                break
        else:
            return tuple(size[0])
    where = f"{op_name}(): argument '{name}'" if op_name else f"argument '{name}'"
    if len(size) == 1 and not _is_int_like(size[0]):
        if not isinstance(size[0], (tuple, list)):  # one argument, and not a sequence of sizes
            raise TypeError(f"{where} (position 1) must be tuple of ints, not {_type_path(size[0])}")
        size = size[0]
    elif size and isinstance(size[0], (tuple, list)):
        raise TypeError(f"{op_name or 'factory'}() takes 1 positional argument but {len(size)} were given")
    dims = []
    for i, d in enumerate(size):
        if type(d) is bool and i == 0:
            raise TypeError(f"{where} (position 1) must be tuple of ints, but found element of type bool at pos 0")
        if type(d) is not bool and not _is_int_like(d):
            raise TypeError(f'{where} failed to unpack the object at pos {i + 1} with error "type must be tuple of '
                            f'ints,but got {type(d).__name__}"')
        dims.append(operator.index(d))
    for d in dims:
        if d < 0:
            if op_name == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {d}: {dims}")
    return tuple(dims)


def _shape_of(size: tuple, op_name: str) -> tuple[int, ...]:
    """``parse_size`` with quick first tries for ``f(2, 3)`` and ``f((2, 3))`` / ``f(x.shape)``."""
    for d in size:
        if type(d) is not int or d < 0:
            break
    else:
        if size:
            return size
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        for d in size[0]:
            if type(d) is not int or d < 0:
                break
        else:
            return tuple(size[0])
    return parse_size(size, op_name=op_name)


def _is_int_like(value) -> bool:
    if type(value) is int:
        return True
    if isinstance(value, (bool, np.bool_, float, complex, np.floating, np.complexfloating)):
        return False
    if isinstance(value, np.ndarray):
        return value.ndim == 0 and value.dtype.kind in "iu"
    inner = array_of(value)
    if inner is not None:
        return inner.ndim == 0 and inner.dtype.kind in "iu"
    return hasattr(type(value), "__index__")


def check_device(device) -> None:
    """Factories accept ``device`` like PyTorch; only the CPU holds data so far."""
    if device is not None:
        check_compute_device(device)


def _target_np(dtype) -> np.dtype:
    """The NumPy dtype for a ``dtype=`` argument, the default dtype for None."""
    return (resolve_dtype(dtype) or _DEFAULT_DTYPE.get())._np


def python_scalar(value, op_name: str = "", param: str = "", position: int = 0):
    """A Python number from a number, a NumPy scalar or a one-element tensor (PyTorch's Scalar)."""
    t = type(value)
    if t is int:
        if not -(2 ** 63) <= value < 2 ** 64:
            raise OverflowError("int too big to convert")
        return value
    if t is float or t is bool or t is complex:
        return value
    if isinstance(value, np.generic):
        return value.item()
    inner = array_of(value)
    if inner is not None:
        if inner.size != 1:
            raise RuntimeError(f"a Tensor with {inner.size} elements cannot be converted to Scalar")
        return inner.reshape(()).item()
    if isinstance(value, numbers.Number):
        return value
    where = f"{op_name}(): argument '{param}' (position {position}) " if op_name else ""
    raise TypeError(f"{where}must be Number, not {type(value).__name__}")


def scalar_dtype(value) -> dt.dtype:
    """PyTorch's dtype for a Python scalar (bool, int64, the default float or complex dtype)."""
    t = type(value)
    if t is bool:
        return dt.bool
    if t is int:
        return dt.int64
    if t is float:
        return _DEFAULT_DTYPE.get()
    return dt.default_complex_dtype()


def checked_fill_value(value, dtype: dt.dtype):
    """``value`` converted for filling a ``dtype`` tensor, with PyTorch's overflow check.

    Integers accept the range of the type (unsigned ones also the negated range,
    which wraps, as in PyTorch); real types refuse a non-zero imaginary part.
    """
    category = dtype._category
    if category == dt._BOOL or category == dt._COMPLEX:
        return value
    overflow = RuntimeError(f"value cannot be converted to type {_CHECKED_TYPE_NAMES[dtype]} without overflow")
    if type(value) is complex:
        if value.imag != 0:
            raise overflow
        value = value.real
    if category == dt._INT:
        info = np.iinfo(dtype._np)
        low = -info.max if info.min == 0 else info.min
        if type(value) is float and not math.isfinite(value):
            raise overflow
        if not low <= value <= info.max:
            raise overflow
        return int(np.array(int(value), np.int64).astype(dtype._np))  # wraps negatives into unsigned types
    if dtype is dt.float32 and math.isfinite(value) and abs(value) > 3.4028234663852886e38:
        raise overflow
    if dtype is dt.float64 and type(value) is int and abs(value) >= 2 ** 1024:
        raise overflow
    return value


# -- tensors from data ----------------------------------------------------------------------------------

_PYTHON_SCALARS = frozenset({bool, int, float, complex})
_SEQUENCES = (list, tuple, range)
_SEQUENCE_TYPES = frozenset(_SEQUENCES)


def _numpy_dtype_of(array: np.ndarray) -> dt.dtype:
    """The tensormodes dtype of an ndarray given as data, with PyTorch's errors."""
    if not array.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. "
                         "Conversion between byte orders is currently not supported.")
    return dt.from_numpy_dtype(array.dtype)


def _python_leaf_dtype(types) -> dt.dtype:
    """PyTorch's dtype for Python scalars of the given types: the widest category wins."""
    if complex in types:
        return dt.default_complex_dtype()
    if float in types:
        return _DEFAULT_DTYPE.get()
    if int in types:
        return dt.int64
    if bool in types:
        return dt.bool
    return _DEFAULT_DTYPE.get()  # no elements at all


def _flatten_rectangular(data) -> tuple[list, list[int], set]:
    """Nested sequences -> (their leaves in order, the shape, the leaves' types),
    checking that every level is rectangular.

    Walks a whole level at a time, so the per-element work stays in C.
    """
    if not isinstance(data, _SEQUENCES):
        return [data], [], {type(data)}
    shape = [len(data)]
    level = data
    while level:
        types = set(map(type, level))
        if types <= _PYTHON_SCALARS:
            return level, shape, types
        if not (types <= _SEQUENCE_TYPES or all(issubclass(t, _SEQUENCES) for t in types)):
            if not any(issubclass(t, _SEQUENCES) for t in types):
                return level, shape, types
            if not all(isinstance(item, _SEQUENCES) or (isinstance(item, np.ndarray) and item.ndim) for item in level):
                raise _ragged_error(level)
            # NumPy arrays next to lists are read as nested sequences, as PyTorch does.
        lengths = set(map(len, level))
        if len(lengths) > 1:
            expected = len(level[0])
            got = next(len(item) for item in level if len(item) != expected)
            raise ValueError(f"expected sequence of length {expected} at dim {len(shape)} (got {got})")
        shape.append(lengths.pop())
        level = list(chain.from_iterable(level))
    return level, shape, set()


def _ragged_error(level: list) -> TypeError:
    """PyTorch's error for a level mixing sequences and scalars."""
    first = level[0]
    if isinstance(first, _SEQUENCES):
        return TypeError("not a sequence")
    bad = next(item for item in level if isinstance(item, _SEQUENCES))
    if isinstance(first, (bool, int, np.integer)):
        return TypeError(f"'{type(bad).__name__}' object cannot be interpreted as an integer")
    return TypeError(f"must be real number, not {type(bad).__name__}")


def _leaf_info(leaf) -> tuple[np.ndarray | None, dt.dtype]:
    """A non-Python-scalar element of nested data: (its array or None, its dtype)."""
    t = type(leaf)
    if t in _PYTHON_SCALARS:
        return None, scalar_dtype(leaf)
    if isinstance(leaf, np.ndarray):
        return leaf, _numpy_dtype_of(leaf)
    if isinstance(leaf, np.generic):
        array = np.asarray(leaf)
        return array, _numpy_dtype_of(array)
    inner = array_of(leaf)
    if inner is not None:
        if inner.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return inner.reshape(()), dt.NP_TO_DTYPE[inner.dtype]
    if isinstance(leaf, numbers.Number):  # other registered number types (Fraction, ...)
        value = complex(leaf) if isinstance(leaf, numbers.Complex) and not isinstance(leaf, numbers.Real) \
            else float(leaf) if not isinstance(leaf, numbers.Integral) else int(leaf)
        return np.asarray(value), scalar_dtype(value)
    if isinstance(leaf, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{t.__name__}'")
    raise RuntimeError(f"Could not infer dtype of {t.__name__}")


def _mixed_leaves_array(leaves: list, shape: list[int]) -> tuple[np.ndarray, dt.dtype]:
    """Leaves that are not all Python scalars: NumPy scalars and arrays, one-element tensors."""
    infos = [_leaf_info(leaf) for leaf in leaves]
    inferred = None
    for _, d in infos:
        inferred = d if inferred is None else dt.promote_types(inferred, d)
    arrays = [np.asarray(leaf) if a is None else a for leaf, (a, _) in zip(leaves, infos, strict=True)]
    inner_shapes = {a.shape for a in arrays}
    if len(inner_shapes) > 1:
        first = arrays[0].shape
        other = next(a.shape for a in arrays if a.shape != first)
        raise ValueError(f"expected sequence of length {first[0] if first else 1} at dim {len(shape)} "
                         f"(got {other[0] if other else 1})")
    # Python scalars are cast straight to the common dtype (float -> float32 directly).
    stacked = np.empty((len(arrays), *arrays[0].shape), inferred._np)
    for i, a in enumerate(arrays):
        stacked[i] = a
    return stacked.reshape(tuple(shape) + arrays[0].shape), inferred


def _check_python_values(array: np.ndarray, target: dt.dtype) -> None:
    """PyTorch's overflow check when Python numbers are stored into an integer type."""
    info = np.iinfo(target._np)
    low = -info.max if info.min == 0 else info.min
    name = repr(target).split(".")[1]
    if array.dtype.kind == "c":
        raise TypeError("must be real number, not complex")
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    if array.size and (array.min() < low or array.max() > info.max):
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")


def data_to_array(data, dtype: dt.dtype | None) -> np.ndarray:
    """Python data (numbers, nested sequences of numbers, NumPy scalars and arrays,
    one-element tensors) as a new ndarray.

    Without ``dtype``, PyTorch's inference: the elements' dtypes promoted, where
    Python floats count as the default dtype and ints as int64. With ``dtype``,
    Python numbers get PyTorch's overflow checks.
    """
    leaves, shape, types = _flatten_rectangular(data)
    if not types <= _PYTHON_SCALARS:
        array, _ = _mixed_leaves_array(leaves, shape)
        return array if dtype is None else array.astype(dtype._np)
    inferred = _python_leaf_dtype(types)
    target = dtype or inferred
    if complex in types and target._category != dt._COMPLEX:
        raise TypeError("must be real number, not complex")
    if target._category == dt._INT and inferred._category >= dt._INT:
        try:
            staged = np.array(leaves, np.int64 if inferred is dt.int64 else np.float64)
        except OverflowError:
            raise ValueError("Overflow when unpacking long long") from None
        if dtype is not None:
            _check_python_values(staged, target)
        return staged.astype(target._np, copy=False).reshape(shape)
    with np.errstate(over="ignore"):  # out-of-range floats become inf, as in PyTorch
        return np.array(leaves, target._np).reshape(shape)


def _tensor_from_array(array: np.ndarray, dtype, copy: bool) -> np.ndarray:
    """An ndarray given as data, cast to ``dtype`` (a fresh copy when ``copy``)."""
    _numpy_dtype_of(array)
    target = array.dtype if dtype is None else dtype._np
    if copy or target != array.dtype:
        return np.array(array, target, copy=True)
    return array


_COPY_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than tensormodes.tensor(sourceTensor).")


def _plain_size(size: tuple, op_name: str) -> bool:
    """True for the common call, sizes given as non-negative Python ints (the careful
    parsing is then skipped); TypeError when no size is given at all."""
    for d in size:
        if type(d) is not int or d < 0:
            return False
    if not size:
        raise TypeError(f'{op_name}() missing 1 required positional arguments: "size"')
    return True


# -- meta rules (device="meta": the result's shape and dtype, checked as the kernels check, no data) ----

def _meta_result(result, dtype=None):
    """A kernel's result (an ndarray, or a tensor returned as is) as a meta result: a meta
    tensor stays itself, data becomes a MetaArray of its shape and memory format."""
    inner = result if isinstance(result, np.ndarray) else array_of(result)
    if type(inner) is MetaArray:
        return result if dtype is None else copy_of(inner, dtype)
    inner = np.asarray(inner)
    strides = tuple(s // inner.itemsize for s in inner.strides)
    return MetaArray(inner.shape, inner.dtype, dense_strides(inner.shape, strides))


def _sized_meta(op_name: str):
    """``zeros`` / ``ones`` / ``empty``: the kernels' slow path (a device is always given here)."""
    def compute(*size, dtype=None, device=None, **_):
        shape = _shape_of(size, op_name)
        check_device(device)
        return MetaArray(shape, _target_np(dtype))
    compute.__name__ = f"_{op_name}_meta"
    return rule(compute)


def _full_meta(size, fill_value, *, dtype=None, device=None, **_):
    check_device(device)
    value = fill_value if type(fill_value) in _PYTHON_SCALARS else python_scalar(fill_value, "full", "fill_value", 2)
    target = scalar_dtype(value) if dtype is None else resolve_dtype(dtype)
    shape = _full_size(size)
    checked_fill_value(value, target)
    return MetaArray(shape, target._np)


def _like_meta(fill: bool = False) -> MetaRule:
    """``*_like``: ``input``'s shape, contiguous as the kernels' results. An explicit
    non-meta device with a meta input asks for real data: the kernel reads only metadata."""
    def compute(opdef, args, kwargs):
        bound = opdef.signature.bind(*args, **kwargs)
        input, dtype, device = bound.arguments["input"], bound.arguments.get("dtype"), bound.arguments.get("device")
        if device is not None and not is_meta_device(device):
            return opdef.kernel(*args, **kwargs)
        check_device(device)
        if not fill:
            return MetaArray(input.shape, input.dtype if dtype is None else resolve_dtype(dtype)._np)
        value = python_scalar(bound.arguments["fill_value"], "full_like", "fill_value", 2)
        target = dt.NP_TO_DTYPE[input.dtype] if dtype is None else resolve_dtype(dtype)
        checked_fill_value(value, target)
        return MetaArray(input.shape, target._np)

    return MetaRule(compute, "full_like" if fill else "like")


def _tensor_meta(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    inner = array_of(data)
    if type(inner) is MetaArray:
        check_device(device)
        warnings.warn(_COPY_WARNING, UserWarning, stacklevel=3)
        return copy_of(inner, None if dtype is None else resolve_dtype(dtype)._np)
    return _meta_result(tensor(data, dtype=dtype, device=device))


def _as_tensor_meta(data, *, dtype=None, device=None):
    inner = array_of(data)
    if type(inner) is MetaArray:
        check_device(device)
        target = None if dtype is None else resolve_dtype(dtype)
        return data if target is None or inner.dtype == target._np else copy_of(inner, target._np)
    return _meta_result(as_tensor(data, dtype=dtype, device=device))


def _asarray_meta(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    inner = array_of(obj)
    if type(inner) is MetaArray:
        check_device(device)
        target = None if dtype is None else resolve_dtype(dtype)
        if target is not None and inner.dtype != target._np:
            if copy is False:
                source = scalar_type_name(dt.NP_TO_DTYPE[inner.dtype])
                raise ValueError(f"can't alias tensor with dtype '{source}' into dtype '{scalar_type_name(target)}'.")
            return copy_of(inner, target._np)
        return copy_of(inner) if copy else obj
    return _meta_result(asarray(obj, dtype=dtype, device=device, copy=copy))


def _scalar_tensor_meta(s, *, dtype=None, device=None, **_):
    check_device(device)
    value = python_scalar(s, "scalar_tensor", "s", 1)
    target = resolve_dtype(dtype) or _DEFAULT_DTYPE.get()
    checked_fill_value(value, target)
    return MetaArray((), target._np)


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


@op(meta=rule(_tensor_meta),
    errors=(Sample(([[1, 2], [3]],)), Sample(([300],), {"dtype": dt.int8}), Sample(([1j],), {"dtype": dt.float32})),
    factory=True, samples=(
    Sample(([[1.0, 2.0], [3.0, 4.0]],)), Sample(([1, 2],), {"dtype": dt.float64}), Sample((2.5,)),
    Sample(([True, False],)), Sample(([1, 2.5, True],)), Sample(([[1 + 2j, 3]],)), Sample(([[], []],)),
    Sample(([0.1, 1e5, -3.25],), {"dtype": dt.float16}),
    Sample(([-1, 255],), {"dtype": dt.uint8}), Sample(([1.7, -2.2],), {"dtype": dt.int32}),
    Sample(([[0.1, -2.5]],), {"dtype": dt.bfloat16})))
def tensor(data, *, dtype: dt.dtype | None = None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """Constructs a tensor with no autograd history by copying ``data``.

    ``data`` may be a number, a (nested) list or tuple, a NumPy array or a
    tensor. Without ``dtype``, Python floats give the default dtype, ints
    ``int64``, bools ``bool`` and complex numbers the default complex dtype; a
    NumPy array keeps its dtype. Copying a tensor warns, as in PyTorch: prefer
    ``t.detach().clone()``.

    >>> import tensormodes as tm
    >>> tm.tensor([[1, 2], [3, 4]])
    tensor([[1, 2],
            [3, 4]])
    >>> tm.tensor([1, 2.5]).dtype, tm.tensor([True]).dtype, tm.tensor(3, dtype=tm.float64)
    (tensormodes.float32, tensormodes.bool, tensor(3., dtype=tensormodes.float64))
    """
    if type(array_of(data)) is MetaArray:  # a meta tensor given as the data: no data to read
        return _tensor_meta(data, dtype=dtype, device=device)
    if device is not None:
        check_device(device)
    target = None if dtype is None else resolve_dtype(dtype)
    t = type(data)
    if t is list or t is tuple or t in _PYTHON_SCALARS:
        return data_to_array(data, target)
    if t is np.ndarray:
        return _tensor_from_array(data, target, copy=True)
    inner = array_of(data)
    if inner is not None:
        warnings.warn(_COPY_WARNING, UserWarning, stacklevel=3)
        return np.array(inner, inner.dtype if target is None else target._np, copy=True)
    if isinstance(data, np.ndarray):
        return _tensor_from_array(np.asarray(data), target, copy=True)
    return data_to_array(data, target)


@op(meta=rule(_as_tensor_meta),
    errors=(Sample(([[1], [2, 3]],)), Sample(([300],), {"dtype": dt.uint8})),
    factory=True, samples=(
    Sample(([1, 2, 3],)), Sample((TensorSpec((2, 3)),)), Sample((TensorSpec((2, 3)),), {"dtype": dt.float64}),
    Sample(([[1.5], [2]],), {"dtype": dt.float16}), Sample((7,))))
def as_tensor(data, *, dtype: dt.dtype | None = None, device=None) -> Tensor:
    """Converts ``data`` into a tensor, sharing data when possible.

    A tensor of the requested dtype is returned itself; a NumPy array of that
    dtype is shared (writes through the tensor show in the array); anything else
    is copied as by ``tensor``.

    >>> import numpy as np, tensormodes as tm
    >>> a = np.array([1, 2, 3])
    >>> t = tm.as_tensor(a); t[0] = -1
    >>> a
    array([-1,  2,  3])
    >>> tm.as_tensor(t) is t
    True
    """
    if type(array_of(data)) is MetaArray:  # a meta tensor given as the data: no data to read
        return _as_tensor_meta(data, dtype=dtype, device=device)
    if device is not None:
        check_device(device)
    target = None if dtype is None else resolve_dtype(dtype)
    if type(data) is np.ndarray:
        return _tensor_from_array(data, target, copy=False)
    inner = array_of(data)
    if inner is not None:
        if target is None or inner.dtype == target._np:
            return data  # the tensor itself, as in PyTorch
        return inner.astype(target._np)
    if isinstance(data, np.ndarray):
        return _tensor_from_array(np.asarray(data), target, copy=False)
    return data_to_array(data, target)


def _has_buffer(obj) -> bool:
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


@op(meta=rule(_asarray_meta),
    errors=(Sample((TensorSpec((2,), "int64"),), {"dtype": dt.float32, "copy": False}),
            Sample(([1, 2],), {"copy": False})),
    factory=True, samples=(
    Sample(([1, 2, 3],)), Sample((TensorSpec((2, 3)),)), Sample((TensorSpec((2, 3), "int64"),), {"dtype": dt.float32}),
    Sample((2.5,)), Sample(([[1, 2]],), {"copy": True}), Sample((TensorSpec((4,), "int32"),), {"copy": False})))
def asarray(obj, *, dtype: dt.dtype | None = None, device=None, copy: bool | None = None,
            requires_grad: bool | None = None) -> Tensor:
    """Converts ``obj`` to a tensor, sharing memory unless a copy is needed or asked for.

    ``obj`` may be a tensor, a NumPy array or scalar, an object with the buffer
    protocol (read as elements of ``dtype``, default the default dtype), a
    number or a nested sequence of numbers. ``copy=True`` always copies;
    ``copy=False`` raises ``ValueError`` when sharing is impossible.

    >>> import numpy as np, tensormodes as tm
    >>> a = np.zeros(2, dtype=np.float32)
    >>> t = tm.asarray(a); t[1] = 5.0
    >>> a.tolist(), tm.asarray([1, 2]).dtype
    ([0.0, 5.0], tensormodes.int64)
    """
    if type(array_of(obj)) is MetaArray:  # a meta tensor given as the data: no data to read
        return _asarray_meta(obj, dtype=dtype, device=device, copy=copy)
    if device is not None:
        check_device(device)
    target = None if dtype is None else resolve_dtype(dtype)
    inner = array_of(obj)
    is_tensor = inner is not None
    if not is_tensor and isinstance(obj, (np.ndarray, np.generic)):
        inner = np.asarray(obj)
        _numpy_dtype_of(inner)
    if inner is not None:
        if target is not None and inner.dtype != target._np:
            if copy is False:
                source = scalar_type_name(dt.NP_TO_DTYPE[inner.dtype])
                raise ValueError(f"can't alias tensor with dtype '{source}' into dtype '{scalar_type_name(target)}'.")
            return inner.astype(target._np)
        if copy:
            return inner.copy()
        return obj if is_tensor else inner  # a tensor is returned itself, as in PyTorch
    if not isinstance(obj, (list, tuple, str)) and type(obj) not in _PYTHON_SCALARS and _has_buffer(obj):
        element = (target or _DEFAULT_DTYPE.get())._np
        nbytes = memoryview(obj).nbytes
        if nbytes % element.itemsize:
            raise ValueError(f"buffer length ({nbytes} bytes) after offset (0 bytes) must be a multiple of "
                             f"element size ({element.itemsize})")
        array = np.frombuffer(obj, element)
        return array.copy() if copy else array
    if copy is False:
        raise ValueError("can't alias arbitrary sequence into a tensor.")
    return data_to_array(obj, target)


def _type_path(value) -> str:
    """A type's name as PyTorch's messages print it: ``int``, ``Tensor``, ``numpy.ndarray``."""
    cls = type(value)
    module = cls.__module__.split(".")[0]
    return cls.__qualname__ if module in ("builtins", "tensormodes") else f"{module}.{cls.__qualname__}"


@op(factory=True, samples=(Sample((np.linspace(-1.0, 1.0, 6).reshape(2, 3),)),
                           Sample((np.arange(4, dtype=np.int16),)), Sample((np.array(True),))))
def from_numpy(ndarray, /) -> Tensor:
    """Creates a tensor from a ``numpy.ndarray``; the tensor and the array share memory.

    Supported dtypes are those tensormodes has: float64, float32, float16,
    bfloat16 (``ml_dtypes``), complex64, complex128, int64, int32, int16, int8,
    uint8 and bool; others raise ``TypeError``.

    >>> import numpy as np, tensormodes as tm
    >>> a = np.array([1, 2, 3])
    >>> t = tm.from_numpy(a); t[0] = -1
    >>> a
    array([-1,  2,  3])
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {_type_path(ndarray)})")
    _numpy_dtype_of(ndarray)
    if not ndarray.flags.writeable:
        warnings.warn(
            "The given NumPy array is not writable, and tensormodes does not support non-writable tensors. "
            "This means writing to this tensor will result in undefined behavior. You may want to copy the "
            "array to protect its data or make it writable before converting it to a tensor.",
            UserWarning, stacklevel=3)
    return ndarray if type(ndarray) is np.ndarray else np.asarray(ndarray)


# -- filled tensors -------------------------------------------------------------------------------------

@op(errors=(Sample((2, -1)), Sample((2.5,))), meta=_sized_meta("zeros"), factory=True, out=True, samples=(
    Sample((2, 3)), Sample(((4,),), {"dtype": dt.int32}), Sample(([2, 0],), {"dtype": dt.bool}), Sample(((),)),
    Sample((1,), {"dtype": dt.complex64})))
def zeros(*size: int, dtype: dt.dtype | None = None, layout=None, device=None,
          requires_grad: bool = False) -> Tensor:
    """Returns a tensor filled with the scalar value 0, with the shape defined by ``size``.

    ``size`` may be given as separate ints or as one sequence of ints.

    >>> import tensormodes as tm
    >>> tm.zeros(2, 3).shape, tm.zeros((2,), dtype=tm.int64)
    (tensormodes.Size([2, 3]), tensor([0, 0]))
    """
    if dtype is None and device is None and _plain_size(size, "zeros"):
        return _np_zeros(size, _DEFAULT_DTYPE.get()._np)
    shape = _shape_of(size, "zeros")
    check_device(device)
    return _np_zeros(shape, _target_np(dtype))


@op(errors=(Sample((-1,)), Sample(([2, "a"],))), meta=_sized_meta("ones"), factory=True, out=True, samples=(
    Sample((2, 3)), Sample(((4,),), {"dtype": dt.int8}), Sample(([3],), {"dtype": dt.bool}), Sample(((),)),
    Sample((2,), {"dtype": dt.bfloat16})))
def ones(*size: int, dtype: dt.dtype | None = None, layout=None, device=None,
         requires_grad: bool = False) -> Tensor:
    """Returns a tensor filled with the scalar value 1, with the shape defined by ``size``.

    >>> import tensormodes as tm
    >>> tm.ones(2), tm.ones((1, 2), dtype=tm.int32)
    (tensor([1., 1.]), tensor([[1, 1]], dtype=tensormodes.int32))
    """
    if dtype is None and device is None and _plain_size(size, "ones"):
        result = _np_empty(size, _DEFAULT_DTYPE.get()._np)
        result.fill(1)  # np.ones is Python code around the same two calls
        return result
    shape = _shape_of(size, "ones")
    check_device(device)
    result = _np_empty(shape, _target_np(dtype))
    result.fill(1)
    return result


@op(meta=_sized_meta("empty"),
    errors=(Sample(((2, -3),)),),
    random=True, factory=True, out=True, samples=(Sample((2, 3)), Sample(((4,),), {"dtype": dt.int64}), Sample(((),))))
def empty(*size: int, dtype: dt.dtype | None = None, layout=None, device=None, requires_grad: bool = False,
          pin_memory: bool = False, memory_format=None) -> Tensor:
    """Returns a tensor of the given shape filled with uninitialized data.

    >>> import tensormodes as tm
    >>> tm.empty(2, 3).shape, tm.empty(0, dtype=tm.int32).dtype
    (tensormodes.Size([2, 3]), tensormodes.int32)
    """
    if dtype is None and device is None and _plain_size(size, "empty"):
        return _np_empty(size, _DEFAULT_DTYPE.get()._np)
    shape = _shape_of(size, "empty")
    check_device(device)
    return _np_empty(shape, _target_np(dtype))


def _empty_strided_meta(size, stride, *, dtype=None, device=None, **_):
    shape, strides = strided_geometry(size, stride, "empty_strided")
    check_device(device)
    return MetaArray(shape, _target_np(dtype), strides)


@op(meta=rule(_empty_strided_meta),
    errors=(Sample(((2, -3), (1, 2))), Sample(((2, 3), (1,))), Sample(((2, 3), (1, -2))), Sample((2, 1))),
    random=True, factory=True, samples=(Sample(((2, 3), (1, 2))), Sample(((4,), (2,)), {"dtype": dt.int64}),
                                        Sample(((), ())), Sample(((2, 3), (0, 0))), Sample(((0, 3), (4, 1)))))
def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: dt.dtype | None = None, layout=None,
                  device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Returns a tensor of the given sizes and strides (in elements) filled with uninitialized
    data, over a new storage just large enough for them (elements may share memory).

    >>> import tensormodes as tm
    >>> t = tm.empty_strided((2, 3), (1, 2))
    >>> t.shape, t.stride(), t.is_contiguous()
    (tensormodes.Size([2, 3]), (1, 2), False)
    """
    shape, strides = strided_geometry(size, stride, "empty_strided")
    check_device(device)
    target = _target_np(dtype)
    storage = _np_empty(storage_span(shape, strides), target)
    return np.ndarray(shape, target, buffer=storage, strides=tuple(s * target.itemsize for s in strides))


def _full_size(size) -> tuple[int, ...]:
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {_type_path(size)}")
    return _shape_of((size,), "full")


def _filled(shape: tuple[int, ...], fill_value, dtype: dt.dtype) -> np.ndarray:
    value = checked_fill_value(fill_value, dtype)
    result = np.empty(shape, dtype._np)
    result.fill(value)
    return result


@op(meta=rule(_full_meta),
    errors=(Sample(((2,), 300), {"dtype": dt.int8}), Sample((2, 1.0)), Sample(((-1,), 1.0))),
    factory=True, out=True, samples=(
    Sample(((2, 3), 1.5)), Sample(((2,), 7)), Sample(((2,), True)), Sample(([2, 2], 2 + 1j)),
    Sample(((2,), 3.7), {"dtype": dt.int32}), Sample(((), -200), {"dtype": dt.uint8}),
    Sample(((3,), 2), {"dtype": dt.float64})))
def full(size, fill_value: Number, *, dtype: dt.dtype | None = None, layout=None, device=None,
         requires_grad: bool = False) -> Tensor:
    """Creates a tensor of size ``size`` filled with ``fill_value``.

    The dtype is inferred from ``fill_value`` (bool, int64, the default float or
    complex dtype) unless ``dtype`` is given.

    >>> import tensormodes as tm
    >>> tm.full((2, 2), 7)
    tensor([[7, 7],
            [7, 7]])
    >>> tm.full((2,), 0.5).dtype, tm.full((1,), True)
    (tensormodes.float32, tensor([True]))
    """
    check_device(device)
    value = fill_value if type(fill_value) in _PYTHON_SCALARS else python_scalar(fill_value, "full", "fill_value", 2)
    target = scalar_dtype(value) if dtype is None else resolve_dtype(dtype)
    return _filled(_full_size(size), value, target)


@op(meta=rule(_scalar_tensor_meta),
    errors=(Sample((1000,), {"dtype": dt.int8}), Sample(("a",))),
    factory=True, samples=(Sample((3.5,)), Sample((True,)), Sample((2,), {"dtype": dt.int64}),
                           Sample((-7,), {"dtype": dt.int8})))
def scalar_tensor(s: Number, *, dtype: dt.dtype | None = None, layout=None, device=None,
                  pin_memory: bool | None = False, requires_grad: bool | None = False) -> Tensor:
    """A 0-dimensional tensor holding ``s``, of the default dtype unless ``dtype`` is given.

    >>> import tensormodes as tm
    >>> tm.scalar_tensor(3), tm.scalar_tensor(2, dtype=tm.int64)
    (tensor(3.), tensor(2))
    """
    check_device(device)
    value = python_scalar(s, "scalar_tensor", "s", 1)
    return _filled((), value, resolve_dtype(dtype) or _DEFAULT_DTYPE.get())


# -- *_like -----------------------------------------------------------------------------------------

_INT32_23 = TensorSpec((2, 3), "int32")


@op(meta=_like_meta(), factory=True, samples=(Sample((M23,)), Sample((_INT32_23,)), Sample((M23,), {"dtype": dt.int64}),
                           Sample((TensorSpec((), "bool"),))))
def zeros_like(input: Tensor, *, dtype: dt.dtype | None = None, layout=None, device=None,
               requires_grad: bool = False, memory_format=None, pin_memory: bool = False) -> Tensor:
    """Returns a tensor filled with 0, with the size (and, by default, dtype) of ``input``.

    >>> import tensormodes as tm
    >>> tm.zeros_like(tm.tensor([[1, 2]]))
    tensor([[0, 0]])
    """
    check_device(device)
    return np.zeros(input.shape, input.dtype if dtype is None else resolve_dtype(dtype)._np)


@op(meta=_like_meta(),
    factory=True, samples=(Sample((M23,)), Sample((_INT32_23,)), Sample((_INT32_23,), {"dtype": dt.float64}),
                           Sample((TensorSpec((2,), "bool"),))))
def ones_like(input: Tensor, *, dtype: dt.dtype | None = None, layout=None, device=None,
              requires_grad: bool = False, memory_format=None, pin_memory: bool = False) -> Tensor:
    """Returns a tensor filled with 1, with the size (and, by default, dtype) of ``input``.

    >>> import tensormodes as tm
    >>> tm.ones_like(tm.zeros(2, dtype=tm.int32))
    tensor([1, 1], dtype=tensormodes.int32)
    """
    check_device(device)
    return np.ones(input.shape, input.dtype if dtype is None else resolve_dtype(dtype)._np)


@op(meta=_like_meta(), random=True, factory=True, samples=(Sample((M23,)), Sample((_INT32_23,), {"dtype": dt.float16})))
def empty_like(input: Tensor, *, dtype: dt.dtype | None = None, layout=None, device=None,
               requires_grad: bool = False, memory_format=None, pin_memory: bool = False) -> Tensor:
    """Returns an uninitialized tensor with the size (and, by default, dtype) of ``input``.

    >>> import tensormodes as tm
    >>> tm.empty_like(tm.zeros(2, 3, dtype=tm.int64)).dtype
    tensormodes.int64
    """
    check_device(device)
    return np.empty(input.shape, input.dtype if dtype is None else resolve_dtype(dtype)._np)


@op(meta=_like_meta(fill=True),
    errors=(Sample((_INT32_23, 2 ** 40)), Sample((M23, 1j), {"dtype": dt.int64})),
    factory=True, samples=(Sample((M23, 2.5)), Sample((_INT32_23, 2.7)), Sample((_INT32_23, True)),
                           Sample((TensorSpec((2,), "bool"), 3)), Sample((M23, 7), {"dtype": dt.int64}),
                           Sample((TensorSpec((2,), "complex64"), 1 - 1j))))
def full_like(input: Tensor, fill_value: Number, *, dtype: dt.dtype | None = None, layout=None,
              device=None, requires_grad: bool = False, memory_format=None, pin_memory: bool = False) -> Tensor:
    """Returns a tensor with the size of ``input`` filled with ``fill_value``, of ``input``'s dtype
    unless ``dtype`` is given (the value is converted: 2.7 fills an int tensor with 2).

    >>> import tensormodes as tm
    >>> tm.full_like(tm.tensor([1, 2]), 2.7)
    tensor([2, 2])
    """
    check_device(device)
    value = python_scalar(fill_value, "full_like", "fill_value", 2)
    target = dt.NP_TO_DTYPE[input.dtype] if dtype is None else resolve_dtype(dtype)
    return _filled(input.shape, value, target)


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
        target = dt.int64 if all_ints else _DEFAULT_DTYPE.get()
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
    Sample((0, 1, 0.3), {"dtype": dt.float16}), Sample((0,))))
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
        kind = target._np.type
        first, last = kind(start), kind(end)
        step = (last - first) / kind(steps - 1)
        index = np.arange(steps)
        return np.where(index < halfway, first + step * index, last - step * (steps - index - 1)).astype(target._np)
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
    return _DEFAULT_DTYPE.get()


_SCALAR_0D = TensorSpec((), "float32", 0.0, 1.0)


@op(meta=_space_meta("linspace"),
    errors=(Sample((0, 1, -1)), Sample((TensorSpec((2,)), 1, 3)), Sample((0, 1, 3), {"dtype": dt.bool})),
    factory=True, out=True, samples=(
    Sample((0, 1, 5)), Sample((-2.5, 10, 7)), Sample((0, 10, 4), {"dtype": dt.int64}), Sample((0, 1, 1)),
    Sample((0, 1, 0)), Sample((0, 1j, 3)), Sample((3, -1, 6), {"dtype": dt.float64}),
    Sample((_SCALAR_0D, 4.0, 3)), Sample((1, 5, 9), {"dtype": dt.int16}), Sample((0, 1, 11), {"dtype": dt.float16})))
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
    Sample((1.5, 1.5, 1)), Sample((0, 1, 0)), Sample((_SCALAR_0D, 1, 3))))
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
        return np.power(target._np.type(base), _spaced(start, end, steps, target)).astype(target._np)
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
                           Sample((0, 3)), Sample((4, 2, -1))))
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
                           Sample((0, 3)), Sample((4, 2, 1))))
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
                                     Sample((3, 1), {"dtype": dt.bool}), Sample((2,), {"m": 3})))
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
