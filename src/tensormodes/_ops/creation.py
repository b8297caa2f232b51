"""Factory ops: tensors from data, filled tensors and ``*_like`` variants (the range-like
factories are in ``ranges.py``).

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
from .._device import check_compute_device, is_meta_device
from .._meta_array import MetaArray, copy_of, dense_strides
from ._samples import M23
from .common import array_of, checked_scalar, ops, resolve_dtype, scalar_type_name
from .meta_rules import MetaRule, rule
from .registry import Sample, Tensor, TensorSpec, op
from .shape import storage_span, strided_geometry

_DEFAULT_DTYPE = dt._DEFAULT_DTYPE  # read directly: get_default_dtype() costs a call on the hot path
_np_zeros, _np_empty = np.zeros, np.empty


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
    return (resolve_dtype(dtype) or _DEFAULT_DTYPE.get()[0])._np


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
        return _DEFAULT_DTYPE.get()[0]
    return dt.default_complex_dtype()


def checked_fill_value(value, dtype: dt.dtype, one_element: bool = True):
    """``value`` converted for filling a ``dtype`` tensor, with PyTorch's overflow check
    (``checked_scalar``). PyTorch fills a tensor of ``one_element`` through double, so float16
    and bfloat16 then take too large values as infinities; larger ones it checks.
    """
    return checked_scalar(value, dtype, saturate_half=one_element)


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
        return _DEFAULT_DTYPE.get()[0]
    if int in types:
        return dt.int64
    if bool in types:
        return dt.bool
    return _DEFAULT_DTYPE.get()[0]  # no elements at all


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
        if type(inner) is MetaArray:  # PyTorch reads each element with item()
            inner.item()
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
        return array if dtype is None else dt.half_staged(array, dtype._np).astype(dtype._np)
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
        if target is dt.float16:  # PyTorch makes a half from a Python float through float
            return np.array(leaves, np.float32).astype(np.float16).reshape(shape)
        return np.array(leaves, target._np).reshape(shape)


def _tensor_from_array(array: np.ndarray, dtype, copy: bool) -> np.ndarray:
    """An ndarray given as data, cast to ``dtype`` (a fresh copy when ``copy``)."""
    _numpy_dtype_of(array)
    target = array.dtype if dtype is None else dtype._np
    if copy or target != array.dtype:
        return np.array(dt.half_staged(array, target), target, copy=True)
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
    checked_fill_value(value, target, math.prod(shape) == 1)
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
        checked_fill_value(value, target, input.size == 1)
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
    target = resolve_dtype(dtype) or _DEFAULT_DTYPE.get()[0]
    checked_fill_value(value, target)
    return MetaArray((), target._np)


def _tensor_decomposition(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """PyTorch's ``tensor(data)``: the tensor is made with the dispatch level off, then lifted
    into the program by ``lift_fresh`` (the one op the dispatch level sees)."""
    t = type(data)
    if not (t is list or t is tuple or t in _PYTHON_SCALARS or t is np.ndarray):
        return NotImplemented  # a tensor as the data: the op itself (it warns)
    with ops._C._DisableTorchDispatch():
        made = ops.tensor(data, dtype=dtype, device=device, pin_memory=pin_memory)
    result = ops.ops.aten.lift_fresh.default(made)
    if requires_grad:
        result.requires_grad_(True)
    return result


@op(meta=rule(_tensor_meta), decompose=_tensor_decomposition,
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
        if target is None:
            return np.array(inner, copy=True)
        return np.array(dt.half_staged(inner, target._np), target._np, copy=True)
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
        if data._requires_grad:
            # PyTorch converts with ``to``, which autograd records (ToCopyBackward0) in grad mode.
            return data.to(target)
        return dt.half_staged(inner, target._np).astype(target._np)
    if isinstance(data, np.ndarray):
        return _tensor_from_array(np.asarray(data), target, copy=False)
    return data_to_array(data, target)


def _has_buffer(obj) -> bool:
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


_ASARRAY_REQUIRES_GRAD = ("tensormodes.asarray: unspecified requires_grad now defaults to obj.requires_grad instead "
                          "of False. Pass requires_grad=False explicitly to get the old behavior and silence this "
                          "warning.")


def _asarray_of_differentiable(obj, target, copy, requires_grad):
    """``asarray`` of a tensor that requires grad, as PyTorch 2.13: unless ``requires_grad=False``,
    the result keeps the history (the conversion recorded by ``to`` or ``clone``, the tensor
    itself otherwise; unspecified, with PyTorch's warning); with ``requires_grad=False`` a
    conversion is detached (None: computed as for any tensor), a leaf itself stops requiring grad
    (PyTorch sets the flag on the tensor it returns) and another tensor is detached."""
    if requires_grad is False:
        if target is None and not copy:
            if not obj.is_leaf:
                return obj.detach()
            obj.requires_grad_(False)
        return None
    if requires_grad is None:
        warnings.warn(_ASARRAY_REQUIRES_GRAD, UserWarning, stacklevel=4)
    if target is not None:
        return obj.to(target)
    return obj.clone() if copy else obj


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
        converts = target is not None and inner.dtype != target._np
        if converts and copy is False:
            source = scalar_type_name(dt.NP_TO_DTYPE[inner.dtype])
            raise ValueError(f"can't alias tensor with dtype '{source}' into dtype '{scalar_type_name(target)}'.")
        if is_tensor and obj._requires_grad:
            kept = _asarray_of_differentiable(obj, target if converts else None, copy, requires_grad)
            if kept is not None:
                return kept
        if converts:
            return dt.half_staged(inner, target._np).astype(target._np)
        if copy:
            return inner.copy()
        return obj if is_tensor else inner  # a tensor is returned itself, as in PyTorch
    if not isinstance(obj, (list, tuple, str)) and type(obj) not in _PYTHON_SCALARS and _has_buffer(obj):
        element = (target or _DEFAULT_DTYPE.get()[0])._np
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
        return _np_zeros(size, _DEFAULT_DTYPE.get()[1])
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
        result = _np_empty(size, _DEFAULT_DTYPE.get()[1])
        result.fill(1)  # np.ones is Python code around the same two calls
        return result
    shape = _shape_of(size, "ones")
    check_device(device)
    result = _np_empty(shape, _target_np(dtype))
    result.fill(1)
    return result


@op(meta=_sized_meta("empty"),
    errors=(Sample(((2, -3),)),),
    random=True, factory=True, out=True, samples=(Sample((2, 3)), Sample(((4,),), {"dtype": dt.int64}), Sample(((),))),
    aten={"empty.memory_format": ("out=out",)}, tags=("core",))
def empty(*size: int, dtype: dt.dtype | None = None, layout=None, device=None, requires_grad: bool = False,
          pin_memory: bool = False, memory_format=None) -> Tensor:
    """Returns a tensor of the given shape filled with uninitialized data.

    >>> import tensormodes as tm
    >>> tm.empty(2, 3).shape, tm.empty(0, dtype=tm.int32).dtype
    (tensormodes.Size([2, 3]), tensormodes.int32)
    """
    if dtype is None and device is None and _plain_size(size, "empty"):
        return _np_empty(size, _DEFAULT_DTYPE.get()[1])
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
                                        Sample(((), ())), Sample(((2, 3), (0, 0))), Sample(((0, 3), (4, 1)))),
    schema={"stride": "SymInt[]"}, tags=("core",))
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


def _full_size(size, op_name: str = "full") -> tuple[int, ...]:
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{op_name}(): argument 'size' (position 1) must be tuple of ints, not {_type_path(size)}")
    return _shape_of((size,), op_name)


def _filled(shape: tuple[int, ...], fill_value, dtype: dt.dtype) -> np.ndarray:
    value = checked_fill_value(fill_value, dtype, math.prod(shape) == 1)
    result = np.empty(shape, dtype._np)
    result.fill(value)
    return result


@op(meta=rule(_full_meta),
    errors=(Sample(((2,), 300), {"dtype": dt.int8}), Sample((2, 1.0)), Sample(((-1,), 1.0))),
    factory=True, out=True, samples=(
    Sample(((2, 3), 1.5)), Sample(((2,), 7)), Sample(((2,), True)), Sample(([2, 2], 2 + 1j)),
    Sample(((2,), 3.7), {"dtype": dt.int32}), Sample(((), -200), {"dtype": dt.uint8}),
    Sample(((3,), 2), {"dtype": dt.float64})), schema={"size": "SymInt[]"}, tags=("core",))
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
                           Sample((-7,), {"dtype": dt.int8})), tags=("core",))
def scalar_tensor(s: Number, *, dtype: dt.dtype | None = None, layout=None, device=None,
                  pin_memory: bool | None = False, requires_grad: bool | None = False) -> Tensor:
    """A 0-dimensional tensor holding ``s``, of the default dtype unless ``dtype`` is given.

    >>> import tensormodes as tm
    >>> tm.scalar_tensor(3), tm.scalar_tensor(2, dtype=tm.int64)
    (tensor(3.), tensor(2))
    """
    check_device(device)
    value = python_scalar(s, "scalar_tensor", "s", 1)
    return _filled((), value, resolve_dtype(dtype) or _DEFAULT_DTYPE.get()[0])


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
                           Sample((TensorSpec((2,), "complex64"), 1 - 1j))), tags=("core",))
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


# -- new_* (Tensor methods: ``input``'s dtype and device unless given) -------------------------------
# Ops at the dispatch level as in PyTorch (``aten.new_zeros.default`` ...): gradient formulas that
# start from ``grad.new_zeros(shape)`` show PyTorch's op there.

def _new_target(input, dtype) -> np.dtype:
    return input.dtype if dtype is None else resolve_dtype(dtype)._np


def _new_size(size: tuple, op_name: str) -> tuple[int, ...]:
    if not size:
        raise TypeError(f'{op_name}() missing 1 required positional arguments: "size"')
    return _shape_of(size, op_name)


def _new_meta(op_name: str) -> MetaRule:
    """``new_*``: the size given, ``input``'s dtype unless given; a real device given for a meta
    input asks for data, which the kernel makes (it reads only metadata)."""
    def compute(opdef, args, kwargs):
        bound = opdef.signature.bind(*args, **kwargs)
        arguments = bound.arguments
        device = arguments.get("kwargs", {}).get("device", arguments.get("device"))
        if device is not None and not is_meta_device(device):
            return opdef.kernel(*args, **kwargs)
        check_device(device)
        dtype = arguments.get("dtype")
        if op_name == "new_full":
            shape = _full_size(arguments["size"], op_name)
            value = python_scalar(arguments["fill_value"], op_name, "fill_value", 2)
            checked_fill_value(value, dt.NP_TO_DTYPE[_new_target(arguments["input"], dtype)], math.prod(shape) == 1)
        else:
            shape = _new_size(arguments.get("size", ()), op_name)
        return MetaArray(shape, _new_target(arguments["input"], dtype))

    return MetaRule(compute, op_name)


_NEW_SAMPLES = (Sample((M23, 2, 3)), Sample((_INT32_23, (4,))), Sample((M23, [2, 0]), {"dtype": dt.bool}),
                Sample((M23, ())), Sample((_INT32_23, 2), {"dtype": dt.float64}))
_NEW_ERRORS = (Sample((M23, -1)), Sample((M23, 2.5)))


@op(function=False, method=True, factory=True, meta=_new_meta("new_zeros"), samples=_NEW_SAMPLES, errors=_NEW_ERRORS)
def new_zeros(input: Tensor, *size: int, dtype: dt.dtype | None = None, layout=None, device=None,
              requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Zeros of ``size``, with this tensor's dtype unless ``dtype`` is given.

    >>> import tensormodes as tm
    >>> tm.zeros(1, dtype=tm.int32).new_zeros(2, 2).dtype
    tensormodes.int32
    """
    check_device(device)
    return _np_zeros(_new_size(size, "new_zeros"), _new_target(input, dtype))


@op(function=False, method=True, factory=True, meta=_new_meta("new_ones"), samples=_NEW_SAMPLES, errors=_NEW_ERRORS)
def new_ones(input: Tensor, *size: int, dtype: dt.dtype | None = None, layout=None, device=None,
             requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Ones of ``size``, with this tensor's dtype unless ``dtype`` is given.

    >>> import tensormodes as tm
    >>> tm.zeros(1, dtype=tm.int64).new_ones(2).tolist()
    [1, 1]
    """
    check_device(device)
    result = _np_empty(_new_size(size, "new_ones"), _new_target(input, dtype))
    result.fill(1)
    return result


@op(function=False, method=True, factory=True, random=True, meta=_new_meta("new_empty"), samples=_NEW_SAMPLES,
    errors=_NEW_ERRORS)
def new_empty(input: Tensor, *size: int, dtype: dt.dtype | None = None, layout=None, device=None,
              requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor of ``size``, with this tensor's dtype unless ``dtype`` is given.

    >>> import tensormodes as tm
    >>> tm.zeros(1, dtype=tm.float64).new_empty(2, 3).shape
    tensormodes.Size([2, 3])
    """
    check_device(device)
    return _np_empty(_new_size(size, "new_empty"), _new_target(input, dtype))


@op(function=False, method=True, factory=True, meta=_new_meta("new_full"),
    samples=(Sample((M23, (2,), 7)), Sample((_INT32_23, [2, 2], 2.7)), Sample((M23, (), True), {"dtype": dt.bool}),
             Sample((_INT32_23, (3,), 1.5), {"dtype": dt.float64})),
    errors=(Sample((M23, 2, 1)), Sample((_INT32_23, (2,), 2 ** 40), {"dtype": dt.int8})),
    schema={"size": "SymInt[]"})
def new_full(input: Tensor, size, fill_value: Number, *, dtype: dt.dtype | None = None, layout=None, device=None,
             requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """``size`` filled with ``fill_value``, with this tensor's dtype unless ``dtype`` is given.

    >>> import tensormodes as tm
    >>> tm.zeros(1).new_full((2,), 7).tolist()
    [7.0, 7.0]
    """
    check_device(device)
    value = python_scalar(fill_value, "new_full", "fill_value", 2)
    return _filled(_full_size(size, "new_full"), value, dt.NP_TO_DTYPE[_new_target(input, dtype)])


def _new_strided_geometry(size, stride) -> tuple:
    if isinstance(size, (tuple, list)) and isinstance(stride, (tuple, list)) and len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of strides "
                           f"({len(stride)})")
    return strided_geometry(size, stride, "new_empty_strided")


def _new_empty_strided_meta(input, size, stride, *, dtype=None, device=None, **_):
    shape, strides = _new_strided_geometry(size, stride)
    check_device(device)
    return MetaArray(shape, _new_target(input, dtype), strides)


@op(function=False, method=True, factory=True, random=True, meta=rule(_new_empty_strided_meta),
    samples=(Sample((M23, (2, 3), (1, 2))), Sample((_INT32_23, [4], [2]), {"dtype": dt.float64})),
    errors=(Sample((M23, (2, 3), (1,))),), schema={"size": "SymInt[]", "stride": "SymInt[]"})
def new_empty_strided(input: Tensor, size: Sequence[int], stride: Sequence[int], *, dtype: dt.dtype | None = None,
                      layout=None, device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """``empty_strided`` with this tensor's dtype unless ``dtype`` is given (autograd copies a
    gradient into one shaped as its leaf when it accumulates, as PyTorch).

    >>> import tensormodes as tm
    >>> tm.zeros(1, dtype=tm.int32).new_empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    shape, strides = _new_strided_geometry(size, stride)
    check_device(device)
    target = _new_target(input, dtype)
    storage = _np_empty(storage_span(shape, strides), target)
    return np.ndarray(shape, target, buffer=storage, strides=tuple(s * target.itemsize for s in strides))
