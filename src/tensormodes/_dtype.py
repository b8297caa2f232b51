"""PyTorch's dtypes and type-promotion rules, on top of NumPy dtypes.

This module sits at the bottom of the library: kernels use it to decide
result dtypes, so it imports nothing from tensormodes.

PyTorch and NumPy promote differently, so nothing here defers to
``np.result_type``: a float16 tensor plus an int64 tensor is float16 in
PyTorch (float64 in NumPy), a 0-dim int64 tensor does not widen an int32
tensor, and a Python float combined with an integer tensor gives the
*default* dtype.

>>> import tensormodes as tm
>>> tm.promote_types(tm.float16, tm.int64)
tensormodes.float16
>>> tm.result_type(tm.tensor([1, 2], dtype=tm.int32), 2.5)
tensormodes.float32
"""

from __future__ import annotations

import builtins
from contextvars import ContextVar

import ml_dtypes
import numpy as np

__all__ = [
    "dtype", "finfo", "iinfo", "get_default_dtype", "set_default_dtype",
    "promote_types", "can_cast",
]

# Category order decides cross-category promotion: bool < integer < float < complex.
_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type, PyTorch style (``tensormodes.float32`` ...).

    >>> import tensormodes as tm
    >>> tm.float32.is_floating_point, tm.float32.itemsize
    (True, 4)
    >>> tm.int8.is_signed
    True
    """

    __slots__ = ("_name", "_np", "_category", "__weakref__")

    def __init__(self, name: str, np_dtype: np.dtype, category: int) -> None:
        self._name = name
        self._np = np_dtype
        self._category = category

    @property
    def is_floating_point(self) -> bool:
        """True for float16, bfloat16, float32 and float64."""
        return self._category == _FLOAT

    @property
    def is_complex(self) -> bool:
        """True for complex64 and complex128."""
        return self._category == _COMPLEX

    @property
    def is_signed(self) -> bool:
        """True unless the dtype is bool or uint8."""
        return self._name not in ("bool", "uint8")

    @property
    def itemsize(self) -> int:
        """Size of one element in bytes."""
        return self._np.itemsize

    def to_real(self) -> dtype:
        """The real counterpart of a complex dtype (itself otherwise)."""
        return _COMPLEX_TO_REAL.get(self, self)

    def to_complex(self) -> dtype:
        """The complex counterpart of a floating dtype (itself if complex)."""
        if self._category == _COMPLEX:
            return self
        if self._category != _FLOAT:
            raise RuntimeError(f"to_complex is not supported for {self!r}")
        return complex128 if self is float64 else complex64

    def __repr__(self) -> str:
        return f"tensormodes.{self._name}"

    def __reduce__(self):
        return self._name


bool = dtype("bool", np.dtype(np.bool_), _BOOL)  # noqa: A001 - PyTorch's name
uint8 = dtype("uint8", np.dtype(np.uint8), _INT)
int8 = dtype("int8", np.dtype(np.int8), _INT)
int16 = dtype("int16", np.dtype(np.int16), _INT)
int32 = dtype("int32", np.dtype(np.int32), _INT)
int64 = dtype("int64", np.dtype(np.int64), _INT)
float16 = dtype("float16", np.dtype(np.float16), _FLOAT)
bfloat16 = dtype("bfloat16", np.dtype(ml_dtypes.bfloat16), _FLOAT)
float32 = dtype("float32", np.dtype(np.float32), _FLOAT)
float64 = dtype("float64", np.dtype(np.float64), _FLOAT)
complex64 = dtype("complex64", np.dtype(np.complex64), _COMPLEX)
complex128 = dtype("complex128", np.dtype(np.complex128), _COMPLEX)

ALL_DTYPES = (bool, uint8, int8, int16, int32, int64, float16, bfloat16,
              float32, float64, complex64, complex128)
# PyTorch's aliases.
half, float, double = float16, float32, float64  # noqa: A001
short, int, long = int16, int32, int64  # noqa: A001
cfloat, cdouble = complex64, complex128
ALIASES = {"half": half, "float": float, "double": double, "short": short,
           "int": int, "long": long, "cfloat": cfloat, "cdouble": cdouble}

_COMPLEX_TO_REAL = {complex64: float32, complex128: float64}
NP_TO_DTYPE: dict[np.dtype, dtype] = {d._np: d for d in ALL_DTYPES}


# PyTorch converts a double to half through float (c10::Half is built from a float), so
# float64 -> float16 rounds twice; NumPy rounds once, and about 7 in 100,000 values differ.
_HALF_NP = np.dtype(np.float16)
_HALF_STAGE = {np.dtype(np.float64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.complex64)}


def half_staged(array, target: np.dtype):
    """``array`` ready for NumPy's conversion to ``target`` as PyTorch rounds it: double
    (and complex double) data bound for float16 first become float (complex float).

    >>> import numpy as np
    >>> half_staged(np.array([1.5903320794306839]), np.dtype(np.float16)).astype(np.float16)
    array([1.59], dtype=float16)
    """
    if target == _HALF_NP and array.dtype in _HALF_STAGE:
        return array.astype(_HALF_STAGE[array.dtype])
    return array


def from_numpy_dtype(np_dtype: np.dtype) -> dtype:
    """The tensormodes dtype for a NumPy dtype; TypeError if there is none."""
    try:
        return NP_TO_DTYPE[np_dtype]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np_dtype.type.__name__}. The only supported types are: "
            "float64, float32, float16, bfloat16, complex64, complex128, int64, int32, "
            "int16, int8, uint8, and bool.") from None


# -- default dtype ---------------------------------------------------------------

# Process-wide, as PyTorch's: one mutable cell, ``[dtype, its NumPy dtype]``, that every thread
# and task reads (``_DEFAULT_DTYPE.get()[0]``; ``[1]`` saves factories an attribute load) and
# ``set_default_dtype`` rewrites in one step. A scope that sets a default of its own
# (``modes.DefaultDtypeMode``) installs a cell of its own in this ContextVar for its duration,
# so ``set_default_dtype`` inside it changes only that scope's default. (The mode stack and
# grad mode, by contrast, are per thread and task.)
_PROCESS_DEFAULT_DTYPE: list = [float32, float32._np]


def default_dtype_cell(d: dtype) -> list:
    """A cell holding ``d`` as the default dtype (see ``_DEFAULT_DTYPE``)."""
    return [d, d._np]

_DEFAULT_DTYPE: ContextVar[list] = ContextVar("tensormodes_default_dtype", default=_PROCESS_DEFAULT_DTYPE)


def get_default_dtype() -> dtype:
    """The dtype that Python floats and float factories produce (float32 unless changed).

    >>> import tensormodes as tm
    >>> tm.get_default_dtype()
    tensormodes.float32
    """
    return _DEFAULT_DTYPE.get()[0]


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype (float16, bfloat16, float32 or float64).

    The default is process-wide, as PyTorch's: threads and tasks started before or after
    see it too (inside a ``modes.DefaultDtypeMode`` scope, the change lasts as long as the scope).

    >>> import tensormodes as tm
    >>> tm.set_default_dtype(tm.float64); tm.tensor(1.0).dtype
    tensormodes.float64
    >>> tm.set_default_dtype(tm.float32)
    """
    if type(d) is not dtype:
        raise TypeError(f"set_default_dtype(): argument 'd' must be a tensormodes.dtype, not {type(d).__name__}")
    if d._category != _FLOAT:
        raise TypeError(f"only floating-point types are supported as the default type, got {d!r}")
    _DEFAULT_DTYPE.get()[:] = (d, d._np)  # one step: other threads never see half of it


def default_complex_dtype() -> dtype:
    """complex128 when the default dtype is float64, complex64 otherwise."""
    return complex128 if _DEFAULT_DTYPE.get()[0] is float64 else complex64


# -- promotion ---------------------------------------------------------------------

def _promote_same_category(a: dtype, b: dtype) -> dtype:
    if a._category == _FLOAT and {a, b} == {float16, bfloat16}:
        return float32
    if a._category == _INT:
        # NumPy agrees with PyTorch inside the integer category (uint8 + int8 -> int16).
        return NP_TO_DTYPE[np.promote_types(a._np, b._np)]
    return a if a.itemsize >= b.itemsize else b


def _promote_uncached(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    if a._category == b._category:
        return _promote_same_category(a, b)
    low, high = (a, b) if a._category < b._category else (b, a)
    if high._category == _COMPLEX and low._category == _FLOAT:
        return complex128 if (low is float64 or high is complex128) else complex64
    return high


_PROMOTION_TABLE = {(a, b): _promote_uncached(a, b) for a in ALL_DTYPES for b in ALL_DTYPES}


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype to which both dtypes can be cast, by PyTorch's rules.

    >>> import tensormodes as tm
    >>> tm.promote_types(tm.uint8, tm.int8)
    tensormodes.int16
    >>> tm.promote_types(tm.float16, tm.bfloat16)
    tensormodes.float32
    """
    try:
        return _PROMOTION_TABLE[(type1, type2)]
    except KeyError:
        bad = type1 if type(type1) is not dtype else type2
        raise TypeError(f"promote_types(): argument must be tensormodes.dtype, not {type(bad).__name__}") from None


def _combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """c10's rule for combining promotion tiers (dimensioned > 0-dim > Python scalar)."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._category == _COMPLEX:
        return higher
    if lower._category == _COMPLEX:
        return higher.to_complex() if higher._category == _FLOAT else lower
    if higher._category == _FLOAT:
        return higher
    if higher is bool or lower._category == _FLOAT:
        return _PROMOTION_TABLE[(higher, lower)]
    return higher


def scalar_dtype(value) -> dtype:
    """The dtype a Python scalar takes when it is combined with tensors."""
    t = type(value)
    if t is builtins.bool:
        return bool
    if t is builtins.int:
        return int64
    if t is builtins.float:
        return _DEFAULT_DTYPE.get()[0]
    if t is builtins.complex:
        return default_complex_dtype()
    if isinstance(value, np.generic):
        # NumPy scalars behave like Python scalars of their kind.
        return scalar_dtype(value.item())
    raise TypeError(f"expected a Tensor or a Python number, got {t.__name__}")


def result_dtype(arrays=(), scalars=()) -> dtype:
    """PyTorch's result dtype for ndarray operands and Python scalar operands.

    Dimensioned arrays decide first; 0-dim arrays and then Python scalars only
    raise the result to a higher *category*, never widen it inside one.
    """
    dim = zero = wrapped = None
    for a in arrays:
        d = NP_TO_DTYPE[a.dtype]
        if a.ndim:
            dim = d if dim is None else _PROMOTION_TABLE[(dim, d)]
        else:
            zero = d if zero is None else _PROMOTION_TABLE[(zero, d)]
    for s in scalars:
        d = scalar_dtype(s)
        wrapped = d if wrapped is None else _PROMOTION_TABLE[(wrapped, d)]
    result = _combine_categories(dim, _combine_categories(zero, wrapped))
    if result is None:
        raise TypeError("result_dtype() needs at least one operand")
    return result


def can_cast(from_: dtype, to: dtype) -> bool:
    """Whether PyTorch allows a computed ``from_`` value into a ``to`` tensor in place.

    Casting is refused only when it lowers the category (float into int, complex into
    float, anything non-bool into bool).

    >>> import tensormodes as tm
    >>> tm.can_cast(tm.float64, tm.int32), tm.can_cast(tm.int64, tm.float16)
    (False, True)
    """
    if type(from_) is not dtype or type(to) is not dtype:
        raise TypeError("can_cast(): arguments 'from_' and 'to' must be tensormodes.dtype")
    return from_._category <= to._category


class finfo:
    """Machine limits of a floating dtype (``eps``, ``max``, ``tiny`` ...).

    >>> import tensormodes as tm
    >>> tm.finfo(tm.float16).max
    65504.0
    >>> tm.finfo().bits
    32
    """

    def __init__(self, type: dtype | None = None) -> None:  # noqa: A002 - PyTorch's name
        d = _DEFAULT_DTYPE.get()[0] if type is None else type
        if not isinstance(d, dtype) or d._category not in (_FLOAT, _COMPLEX):
            raise TypeError(f"finfo(): argument 'type' must be a floating point dtype, got {d!r}")
        d = d.to_real()
        info = ml_dtypes.finfo(d._np) if d is bfloat16 else np.finfo(d._np)
        self.dtype = repr(d).split(".")[1]
        self.bits = info.bits
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
        self.resolution = builtins.float(info.resolution)

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution}, min={self.min}, max={self.max}, eps={self.eps}, "
                f"smallest_normal={self.tiny}, tiny={self.tiny}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer (or bool) dtype.

    >>> import tensormodes as tm
    >>> tm.iinfo(tm.int8).min, tm.iinfo(tm.uint8).max
    (-128, 255)
    """

    def __init__(self, type: dtype) -> None:  # noqa: A002 - PyTorch's name
        if not isinstance(type, dtype) or type._category > _INT:
            raise TypeError(f"iinfo(): argument 'type' must be an integer dtype, got {type!r}")
        d = type
        if d is bool:
            self.bits, self.min, self.max = 8, 0, 1
        else:
            info = np.iinfo(d._np)
            self.bits, self.min, self.max = info.bits, builtins.int(info.min), builtins.int(info.max)
        self.dtype = repr(d).split(".")[1]

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
