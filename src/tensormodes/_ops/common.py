"""Helpers shared by kernels: PyTorch's promotion applied to NumPy operands,
dimension wrapping, and PyTorch-style errors."""

from __future__ import annotations

import functools
import numbers
import sys
import warnings

import numpy as np

from .. import _dtype as dt
from .._symbolic import SymFloat, SymInt
from .._tensor_base import PLAIN, TensorBase

ND = np.ndarray

try:
    # NumPy 2 keeps its floating-point error state in a ContextVar; ``np.errstate``
    # rebuilds the state object on every entry, which costs as much as a small kernel.
    from numpy._core._ufunc_config import _extobj_contextvar as _NUMPY_ERRORS
    from numpy._core._ufunc_config import _make_extobj

    _SILENT = _make_extobj(all="ignore")
except ImportError:  # a NumPy without these internals
    _NUMPY_ERRORS = None


class _Quiet:
    """A context manager that runs its body as ``with np.errstate(all="ignore"):`` does, at a
    third of the cost: PyTorch overflows to inf and divides into inf / NaN without warnings.

    >>> import numpy as np
    >>> with quiet():
    ...     print(np.float32(1) / np.float32(0))
    inf
    """

    __slots__ = ("_token",)

    def __enter__(self):
        self._token = _NUMPY_ERRORS.set(_SILENT)

    def __exit__(self, *exc_info):
        _NUMPY_ERRORS.reset(self._token)


quiet = _Quiet if _NUMPY_ERRORS is not None else functools.partial(np.errstate, all="ignore")

# What NumPy warns about in tensormodes' own code (inf - inf on the ufunc fast path, an
# out-of-range cast when writing back in place) PyTorch does silently. Wrapping every call
# in ``quiet()`` would cost the hot path a tenth of its time; a filter costs nothing until a
# warning is raised, and matches only warnings raised from tensormodes' modules (generated
# code included: it runs as the module tensormodes._generated), never from the user's own NumPy calls.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"tensormodes(\.|$)")


def is_array(x) -> bool:
    return type(x) is ND


def dtype_of(array: np.ndarray) -> dt.dtype:
    """The tensormodes dtype of an array."""
    return dt.NP_TO_DTYPE[array.dtype]


def is_int(value) -> bool:
    """True for an integer that is not a bool (Python's or NumPy's)."""
    # type() first: isinstance against the numbers ABC is slow.
    return type(value) is int or (isinstance(value, numbers.Integral) and not isinstance(value, bool))


def shape_text(shape) -> str:
    """A shape as PyTorch's messages write it (``2x3``)."""
    return "x".join(str(d) for d in shape)


def along(dim: int, index) -> tuple:
    """A NumPy index applying ``index`` to dimension ``dim`` only (basic indexing: a view)."""
    return (slice(None),) * dim + (index, Ellipsis)


# The array dtypes PyTorch's CPU kernels compute in float32 (half precision).
BFLOAT16 = dt.bfloat16._np
HALF_TYPES = frozenset({np.dtype(np.float16), BFLOAT16})
# The array dtypes NumPy computes as PyTorch does, without widening or rounding.
PLAIN_FLOATS = frozenset({np.dtype(np.float32), np.dtype(np.float64)})
# The largest finite value of each floating and complex dtype (complex: of each part), for
# PyTorch's check that a Python number fits the dtype it is converted to.
FLOAT_MAX = {d: float(dt.finfo(d).max) for d in (dt.float16, dt.bfloat16, dt.float32, dt.float64)}
FLOAT_MAX[dt.complex64], FLOAT_MAX[dt.complex128] = FLOAT_MAX[dt.float32], FLOAT_MAX[dt.float64]


def operand_dtype(*operands) -> dt.dtype:
    """PyTorch's result dtype of arrays and Python scalars."""
    # The common case first (an optimizer's lerp_, addcmul_ ...): arrays of one floating dtype
    # with real Python numbers, whose result is that dtype whatever the arrays' ranks.
    common = None
    for x in operands:
        kind = type(x)
        if kind is ND:
            if common is None:
                common = x.dtype
            elif x.dtype is not common:
                break
        elif kind is not float and kind is not int and kind is not bool and x is not None:
            break
    else:
        if common is not None and common.kind == "f":
            return dt.NP_TO_DTYPE[common]
    arrays = [x for x in operands if type(x) is ND]
    scalars = [x for x in operands if type(x) is not ND and x is not None]
    return dt.result_dtype(arrays, scalars)


def to_dtype(x, dtype: dt.dtype):
    """An operand converted for computing in ``dtype``.

    Arrays are cast; Python scalars stay Python scalars (NumPy then treats them
    as weak, like PyTorch) unless an integer does not fit, where PyTorch wraps.
    """
    if type(x) is ND:
        return x if x.dtype == dtype._np else x.astype(dtype._np)
    if isinstance(x, np.generic):
        x = x.item()
    if type(x) is int:
        if not _INT64_MIN <= x < _UINT64_END:
            check_python_int(x)
        if dtype._category == dt._INT:
            info = np.iinfo(dtype._np)
            if not info.min <= x <= info.max:
                return np.array(x).astype(dtype._np)[()]
    return x


_INT64_MIN, _UINT64_END = -2 ** 63, 2 ** 64


def check_python_int(value: int) -> None:
    """PyTorch reads a Python int as an int64 or a uint64 Scalar: OverflowError, in its
    words, for one beyond both."""
    if value < _INT64_MIN:
        raise OverflowError("can't convert negative int to unsigned")
    if value >= _UINT64_END:
        raise OverflowError("int too big to convert")


def floating(dtype: dt.dtype) -> dt.dtype:
    """``dtype`` if floating or complex, else the default dtype (int -> float ops)."""
    return dtype if dtype._category >= dt._FLOAT else dt.get_default_dtype()


def binary(ufunc, a, b, to_float: bool = False):
    """``ufunc(a, b)`` computed in PyTorch's promoted dtype.

    ``to_float``: integer and bool operands compute in the default float dtype.
    """
    try:
        if type(a) is ND and type(b) is ND and a.dtype is b.dtype and not (to_float and a.dtype.kind in "biu"):
            return ufunc(a, b)
        dtype = operand_dtype(a, b)
        if to_float:
            dtype = floating(dtype)
        result = ufunc(to_dtype(a, dtype), to_dtype(b, dtype))
        if dtype._np is BFLOAT16 and result.dtype.kind == "f":
            # NumPy's bfloat16 with a Python float computes (and stays) in float32: rounded back,
            # as PyTorch's bfloat16 kernels compute in float32 and round
            return result.astype(BFLOAT16)
        return result
    except ValueError:
        check_same_shape_or_broadcast(np.shape(a), np.shape(b))
        raise


def unary(ufunc, a, *, to_float: bool = False):
    """``ufunc(a)``; integer inputs compute in the default float dtype when ``to_float``."""
    if to_float and a.dtype.kind in "biu":
        a = a.astype(dt.get_default_dtype()._np)
    return ufunc(a)


def wrap_dim(dim, ndim: int) -> int:
    """``dim`` as a non-negative index, raising PyTorch's IndexError when out of range."""
    if type(dim) is int and (-ndim <= dim < ndim):  # the common case: isinstance(ABC) is slow
        return dim % ndim
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"dim must be an int, not {type(dim).__name__}")
    low, high = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    if not low <= dim <= high:
        raise IndexError(f"Dimension out of range (expected to be in range of [{low}, {high}], but got {dim})")
    return int(dim) % max(ndim, 1)


def wrap_dims(dims, ndim: int) -> tuple[int, ...]:
    """A dim or sequence of dims, wrapped; RuntimeError on repeats."""
    if type(dims) is int:
        return (wrap_dim(dims, ndim),)
    if isinstance(dims, numbers.Integral) and not isinstance(dims, bool):
        dims = (dims,)
    wrapped = tuple(wrap_dim(d, ndim) for d in dims)
    seen = set()
    for d in wrapped:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    return wrapped


def check_same_shape_or_broadcast(*shapes) -> tuple[int, ...]:
    """The broadcast shape, or PyTorch's RuntimeError naming the mismatch."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        a, b = shapes[0], shapes[1] if len(shapes) > 1 else shapes[0]
        for i in range(1, min(len(a), len(b)) + 1):
            if a[-i] != b[-i] and a[-i] != 1 and b[-i] != 1:
                raise RuntimeError(
                    f"The size of tensor a ({a[-i]}) must match the size of tensor b ({b[-i]}) at "
                    f"non-singleton dimension {max(len(a), len(b)) - i}") from None
        raise RuntimeError(f"shapes {[list(s) for s in shapes]} cannot be broadcast together") from None


def array_of(value):
    """The array behind a tensor (also one nested in Python data: ``tensor([t0, t1])``), else None."""
    return value._data if isinstance(value, TensorBase) else None


def nested_to_array(data) -> tuple[np.ndarray, bool]:
    """Python data -> (ndarray, came_from_python_scalars).

    The flag says whether PyTorch's inference for Python numbers applies
    (floats -> default dtype, complex -> default complex dtype).
    """
    inner = array_of(data)
    if inner is not None:
        return inner, False
    if isinstance(data, np.ndarray):
        return data, False
    if isinstance(data, (list, tuple)):
        parts = [nested_to_array(d) for d in data]
        if not parts:
            return np.empty((0,), np.float64), True
        from_python = all(p[1] for p in parts)
        arrays = [p[0] for p in parts]
        shapes = {a.shape for a in arrays}
        if len(shapes) != 1:
            raise ValueError(f"expected sequence of length {len(arrays[0]) if arrays[0].ndim else 1} at "
                             f"dim {1} (got {len(arrays[-1]) if arrays[-1].ndim else 1})")
        return np.stack(arrays), from_python
    if isinstance(data, np.generic):
        return np.asarray(data), False
    if isinstance(data, (bool, int, float, complex)):
        return np.asarray(data), True
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


# PyTorch's ScalarType names ("Long", "Float" ...) and the C++ element type names
# ("long int", "c10::Half" ...) that its error messages use.
_SCALAR_TYPE_NAMES = {
    dt.bool: "Bool", dt.uint8: "Byte", dt.int8: "Char", dt.int16: "Short", dt.int32: "Int", dt.int64: "Long",
    dt.float16: "Half", dt.bfloat16: "BFloat16", dt.float32: "Float", dt.float64: "Double",
    dt.complex64: "ComplexFloat", dt.complex128: "ComplexDouble",
}
_CPP_TYPE_NAMES = {
    dt.bool: "bool", dt.uint8: "unsigned char", dt.int8: "signed char", dt.int16: "short int", dt.int32: "int",
    dt.int64: "long int", dt.float16: "c10::Half", dt.bfloat16: "c10::BFloat16", dt.float32: "float",
    dt.float64: "double", dt.complex64: "c10::complex<float>", dt.complex128: "c10::complex<double>",
}

# The C++ types PyTorch names in "value cannot be converted to type int8_t without overflow".
_OVERFLOW_TYPE_NAMES = {**_CPP_TYPE_NAMES, dt.uint8: "uint8_t", dt.int8: "int8_t", dt.int16: "int16_t",
                        dt.int64: "int64_t"}


def scalar_type_name(dtype: dt.dtype) -> str:
    """PyTorch's ScalarType name of ``dtype`` (``Long``, ``Float``, ``ComplexDouble`` ...)."""
    return _SCALAR_TYPE_NAMES[dtype]


def no_derivative(aten_name: str):
    """The gradient formula of an op PyTorch records without a derivative: its result requires
    grad, and a backward through it raises PyTorch's error (the op is not silently a constant)."""
    def formula(grad):
        raise RuntimeError(f"derivative for aten::{aten_name} is not implemented")
    formula.__name__ = formula.__qualname__ = f"_{aten_name}_no_derivative"
    formula.no_derivative = True  # gradient checks skip it
    return formula


def derivative_not_implemented(aten_name):
    """The gradient formula of an op whose derivative PyTorch declares not implemented: its
    result requires grad, and a backward through it raises PyTorch's NotImplementedError.
    ``aten_name`` is the name PyTorch's message gives, or a function of the op's ``dim`` giving
    it (``unique`` is ``_unique2`` or ``unique_dim``)."""
    def formula(grad, dim):
        name = aten_name(dim) if callable(aten_name) else aten_name
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    formula.no_derivative = True  # gradient checks skip it
    return formula


def not_implemented(kernel_name: str, dtype: dt.dtype) -> NotImplementedError:
    """PyTorch's error for a kernel that has no version for ``dtype``."""
    return NotImplementedError(f'"{kernel_name}" not implemented for \'{scalar_type_name(dtype)}\'')


def cpp_type_name(dtype: dt.dtype) -> str:
    """The C++ element type PyTorch names for ``dtype`` (``float``, ``long int``, ``c10::Half`` ...)."""
    return _CPP_TYPE_NAMES[dtype]


def overflow_type_name(dtype: dt.dtype) -> str:
    """The C++ type PyTorch's scalar overflow errors name for ``dtype`` (``int8_t``, ``c10::Half`` ...)."""
    return _OVERFLOW_TYPE_NAMES[dtype]


_HALF_DTYPES = (dt.float16, dt.bfloat16)


def _through_float(value: float, dtype: dt.dtype) -> float:
    # c10::Half is built from a float: a double bound for float16 is rounded to float first
    # (NumPy would round it once, straight to half).
    if dtype is not dt.float16 or value - value != 0:
        return value
    return float(np.float32(value)) if abs(value) < 3.4e38 else value


def checked_scalar(value, dtype: dt.dtype, *, saturate_half: bool = False):
    """A Python number converted for storing into a ``dtype`` tensor as PyTorch converts a
    Scalar (c10's ``checked_convert``): a Python value, or RuntimeError "value cannot be
    converted to type ... without overflow".

    * Python ints must fit int64 or uint64 (OverflowError otherwise, in PyTorch's words).
    * Into integer types, ints may also be negative down to ``-max`` of an unsigned type
      (they wrap: -1 is 255 in uint8); floats must be finite and within the type's range
      (they truncate, as C casts do); a complex number must have no imaginary part.
    * Into floating and complex types, finite parts must be within the type's range.
    * ``saturate_half``: the one-element paths (``fill_`` of one element, ``t[i] = v``)
      convert through double, so float16 and bfloat16 take too large values as infinities
      and refuse a complex number naming ``double``.
    """
    kind = type(value)
    if kind is int:
        check_python_int(value)
    if dtype is dt.bool:
        return bool(value)
    if saturate_half and dtype in _HALF_DTYPES:
        if kind is complex:
            if value.imag != 0:
                raise RuntimeError("value cannot be converted to type double without overflow")
            value = value.real
        return _through_float(float(value), dtype)
    overflow = RuntimeError(f"value cannot be converted to type {overflow_type_name(dtype)} without overflow")
    if dtype.is_complex:
        parts = (value.real, value.imag) if kind is complex else (value,)
        if any(abs(p) > FLOAT_MAX[dtype] and p - p == 0 for p in parts):  # (p - p == 0: finite)
            raise overflow
        return value
    if kind is complex:
        if value.imag != 0:
            raise overflow
        value, kind = value.real, float
    if dtype.is_floating_point:
        if abs(value) > FLOAT_MAX[dtype] and (kind is not float or value - value == 0):
            raise overflow
        if dtype is dt.float16 and kind is float:
            return _through_float(value, dtype)
        return float(value) if kind is int and value >= 2 ** 63 else value  # (beyond what NumPy takes as an int)
    info = np.iinfo(dtype._np)
    if kind is float:
        # compared as doubles, as in C++ (2.0 ** 63 passes for int64 and wraps to its lowest value)
        if not float(info.min) <= value <= float(info.max):
            raise overflow
        with np.errstate(invalid="ignore"):
            return int(np.array(value).astype(dtype._np))
    if not (-info.max if info.min == 0 else info.min) <= value <= info.max:
        raise overflow
    return int(np.array(value, np.int64).astype(dtype._np))  # negatives wrap into unsigned types


def array_type_name(array: np.ndarray) -> str:
    """``scalar_type_name`` of an array's dtype."""
    return _SCALAR_TYPE_NAMES[dt.NP_TO_DTYPE[array.dtype]]


def resolve_dtype(dtype, default: dt.dtype | None = None) -> dt.dtype | None:
    """Validate a ``dtype=`` argument (None gives ``default``)."""
    if dtype is None:
        return default
    if type(dtype) is not dt.dtype:
        raise TypeError(f"argument 'dtype' must be tensormodes.dtype, not {type(dtype).__name__}")
    return dtype


def conjugate(x):
    """The complex conjugate of a Tensor or number (the value itself if real), for gradient
    formulas: PyTorch's gradients of complex inputs conjugate the local derivative
    (``grad * conj(b)`` for ``a * b``)."""
    if isinstance(x, (int, float, complex, np.generic)):  # concrete types: cheaper than numbers.Number
        return x.conjugate()
    if type(x) is PLAIN.tensor and x._data.dtype.kind != "c":  # (no call of the public method)
        return x
    if type(x) is SymInt or type(x) is SymFloat:  # an unbacked real number (make_fx's fake tracing)
        return x
    return x.conj() if x.is_complex() else x


def adjoint(x):
    """The conjugate transpose of a Tensor (a batch of matrices), for gradient formulas: the
    transpose if real. A matrix's is ``t()``, as in PyTorch's formulas (so its dispatch level
    sees ``aten.t``)."""
    ndim = x._data.ndim if type(x) is PLAIN.tensor else x.dim()
    return conjugate(x.t() if ndim == 2 else x.mT)


class _FormulaHooks:
    """What the autograd layer above gives gradient formulas: ``listens(t)``, its ``below_listens``."""

    listens = staticmethod(lambda t: False)


FORMULA_HOOKS = _FormulaHooks()


def dispatch_listens(t) -> bool:
    """For gradient formulas: whether the dispatch level would see ops on ``t`` (a dispatch mode is
    active, or ``t`` is a ``__torch_dispatch__`` subclass). Where PyTorch's formula takes more
    ops than a faster form giving the same values, a formula takes PyTorch's form only then."""
    return FORMULA_HOOKS.listens(t)


def last_axis_maximum(x: np.ndarray) -> np.ndarray:
    """``np.maximum.reduce(x, -1, keepdims=True)``: the same values (a maximum does not depend on
    the order its elements are taken in, NaN included), but for many short rows (attention scores,
    softmax over a few classes) from a transposed copy, reduced along its first axis: NumPy reduces
    each row of a last axis in its own inner loop (~50 ns a row), the copy costs ~1 ns an element.

    >>> last_axis_maximum(np.array([[1.0, 3.0, 2.0], [4.0, -1.0, 0.0]])).tolist()
    [[3.0], [4.0]]
    """
    length = x.shape[-1] if x.ndim else 0
    if not 0 < length <= 48 or x.size < 32 * length:
        return np.maximum.reduce(x, -1, keepdims=True)
    rows = x.reshape(-1, length)
    return np.maximum.reduce(rows.T.copy(), 0).reshape(x.shape[:-1] + (1,))


def zero_where(condition, value):
    """``where(condition, 0, value)`` as PyTorch's formulas write it, when the dispatch level listens;
    else the same values as ``value.where(~condition, 0)``, faster (the method form)."""
    if dispatch_listens(value):
        return ops.where(condition, 0, value)
    return value.where(condition.logical_not(), 0)


def squared(x):
    """``x.pow(2)`` as PyTorch's formulas write it, when the dispatch level listens; else ``x * x``,
    the same values for real ``x`` and faster. A complex ``x`` is always ``x * x`` (NumPy's
    complex power rounds differently)."""
    if dispatch_listens(x) and not x.is_complex():
        return x.pow(2)
    return x * x


def conj_mT(x):
    """``x.mH``, as PyTorch's formulas write it where they take ``mH()`` (its dispatch level sees
    ``aten.transpose``, a matrix's too), not ``t()``: the conjugate transpose of the last two dims."""
    return conjugate(x.mT)


def is_tensor(value) -> bool:
    """For gradient formulas: whether an argument is a tensor (not None, not a number)."""
    return value is not None and not isinstance(value, numbers.Number)


def no_complex_autograd(name: str):
    """A ``differentiable=`` predicate (asked only for calls that would be recorded) for ops
    PyTorch has no complex gradient for: their complex calls raise its error."""

    def real_only(input, *arguments) -> bool:
        if input.is_complex():
            raise RuntimeError(f"{name} does not support automatic differentiation for outputs with complex dtype.")
        return True

    return real_only


def output_differentiability(*flags: bool):
    """Marks a gradient formula with which of its op's outputs are differentiable, as PyTorch's
    ``derivatives.yaml`` says (``output_differentiability: [True, False]``): the others get no
    history (``requires_grad`` False) and are saved for the formula as plain tensors.

    >>> @output_differentiability(True, False)
    ... def formula(grad):
    ...     return grad[0]
    >>> formula.output_differentiability
    (True, False)
    """

    def mark(formula):
        formula.output_differentiability = flags
        return formula

    return mark


def recordable(dtype: dt.dtype) -> bool:
    """A ``differentiable=`` check (asked only for calls that would be recorded): PyTorch's
    autograd refuses a result of an integer or bool ``dtype``, which ops whose result takes an
    operand's dtype (an empty ``bmm``) can give from floating inputs."""
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"Autograd not support dtype: {scalar_type_name(dtype)}")
    return True


def overload_node(number: str, tensor: str, *positions: int):
    """The backward node of the overload a call reaches, as PyTorch numbers them: ``tensor`` when an
    argument at one of ``positions`` is a tensor, else ``number`` (``x.fmod(2)`` FmodBackward0,
    ``x.fmod(y)`` FmodBackward1; ``x.clamp(0, 1)`` ClampBackward1, ``x.clamp(t)`` ClampBackward0).

    >>> overload_node("fmod", "fmod#1", 1)(np.ones(2), 2.0)
    'fmod'
    """
    def node(*arguments) -> str:
        given = (arguments[i] for i in positions)
        return tensor if any(a is not None and not isinstance(a, numbers.Number) for a in given) else number

    return node


def writes_into_input(input, *arguments) -> bool:
    """A ``differentiable=`` predicate (asked only for calls that would be recorded) for ops that
    write values into a copy of ``input`` (``index_put``, ``masked_fill``, ``index_fill``): where a
    value that requires grad goes into an integer or bool input, PyTorch's autograd refuses the
    result."""
    return recordable(input.dtype)


def one_sequence_as_items(values: tuple) -> tuple:
    """A ``*tensors`` parameter given one list or tuple (``f([a, b])``) as its items
    (``f(a, b)``), as PyTorch's Python-level functions accept (an op's ``normalize``)."""
    if len(values) == 1 and isinstance(values[0], (list, tuple)):
        return tuple(values[0])
    return values


class PublicOps:
    """The public functions of a module, for gradient formulas: ``ops.cat(...)`` calls
    ``tensormodes.cat``, ``ops.linalg.svd(...)`` ``tensormodes.linalg.svd``. Formulas call public
    functions (so modes and double backward see them), which are generated above this package:
    an attribute is looked up in ``sys.modules`` when read, at call time. ``tests/test_op_table.py``
    reads the package's source and checks that every attribute used on ``ops`` names a public
    function, so a misspelt name fails the tests rather than a backward pass.

    >>> import tensormodes as tm
    >>> ops.cat is tm.cat and ops.linalg.svd is tm.linalg.svd
    True
    """

    __slots__ = ("_module",)

    def __init__(self, module: str) -> None:
        self._module = module

    def __getattr__(self, name: str):
        return getattr(sys.modules[self._module], name)

    def __repr__(self) -> str:
        return f"PublicOps({self._module!r})"


# The public functions of ``tensormodes`` (and through it of ``tensormodes.linalg`` and
# ``tensormodes.nn.functional``: ``ops.linalg.svd``), for gradient formulas.
ops = PublicOps("tensormodes")
