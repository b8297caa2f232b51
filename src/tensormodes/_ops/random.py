"""Random sampling: ``Generator``, the default generator, the draws the random ops share and
the random factories (``rand``, ``randn``, ``randint``, ``randperm``, the ``*_like`` ones,
``normal``, ``bernoulli``, ``multinomial``). The in-place ``Tensor.uniform_`` family is in
``random_inplace.py``, the rejection samplers (``poisson``, gamma, Dirichlet) in
``random_rejection.py``.

The default generator is process-wide, as in PyTorch (``manual_seed`` reseeds
it for every thread). Streams are PyTorch's CPU streams: the same seed gives the same
numbers as PyTorch 2.13 on a CPU (the engine is ``_mt19937.py``, the samplers
``_random_kernels.py``).
"""

from __future__ import annotations

import numbers
import operator
import warnings
from numbers import Number

import numpy as np

from .. import _dtype as dt
from .._device import is_meta_device, parse_device
from .._memory_format import channels_last, channels_last_3d, preserve_format
from .._meta_array import MetaArray
from .._tensor_base import TensorBase, wrap_array
from . import _random_kernels as kernels
from ._mt19937 import MTStream
from ._samples import M23
from .common import (
    array_of,
    check_same_shape_or_broadcast,
    cpp_type_name,
    no_complex_autograd,
    not_implemented,
    ops,
    resolve_dtype,
    scalar_type_name,
)
from .creation import check_device, checked_fill_value, parse_size, python_scalar
from .meta_rules import MetaRule, rule
from .registry import Sample, Tensor, TensorSpec, op

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state"]
_DEFAULT_DTYPE = dt._DEFAULT_DTYPE
_SEED_MASK = 0xFFFF_FFFF_FFFF_FFFF
_DEFAULT_SEED = 67280421310721  # PyTorch's default CPU seed

# Digits of precision of each floating type: the integers it holds exactly are +-2**digits.
_DIGITS = {dt.float16: 11, dt.bfloat16: 8, dt.float32: 24, dt.float64: 53}


class Generator:
    """A pseudorandom number generator with its own seed and state (CPU only): PyTorch's
    32-bit Mersenne Twister, so a seed gives PyTorch's numbers.

    ``get_state`` returns the state as a ``uint8`` tensor in PyTorch's layout (5,056
    bytes): a state saved by PyTorch restores here and the other way round.

    >>> import tensormodes as tm
    >>> g = tm.Generator().manual_seed(0)
    >>> state = g.get_state()
    >>> a = tm.rand(2, generator=g)
    >>> _ = g.set_state(state)
    >>> bool((a == tm.rand(2, generator=g)).all()), g.initial_seed(), tuple(state.shape)
    (True, 0, (5056,))
    """

    def __init__(self, device="cpu") -> None:
        parsed = parse_device(device)
        if parsed.type != "cpu":
            raise RuntimeError(f"{parsed.type.upper()} device type not an accelerator.")
        self._device = parsed
        self._stream = MTStream(_DEFAULT_SEED)

    @property
    def device(self):
        """The device the generator produces numbers for (always the CPU)."""
        return self._device

    def manual_seed(self, seed: int) -> Generator:
        """Set the seed (any int in ``[-2**63, 2**64)``; negatives wrap) and return the generator."""
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if not -(2 ** 63) <= seed <= _SEED_MASK:
            raise ValueError("Overflow when unpacking long long")
        self._stream.reseed(seed & _SEED_MASK)
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy and return the new 64-bit seed."""
        new_seed = int(np.random.SeedSequence().entropy) & _SEED_MASK
        self.manual_seed(new_seed)
        return new_seed

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with."""
        return self._stream.seed

    def get_state(self) -> Tensor:
        """The generator's state: a ``uint8`` tensor in PyTorch's layout, for ``set_state``."""
        return wrap_array(np.frombuffer(self._stream.to_bytes(), np.uint8).copy())

    def set_state(self, new_state) -> Generator:
        """Restore a state returned by ``get_state`` (here or by PyTorch); returns the generator."""
        self._stream.load_bytes(_state_bytes(new_state))
        return self

    def clone_state(self) -> Generator:
        """A new generator in this one's state (the cached normal included)."""
        clone = Generator(self._device)
        clone._stream = self._stream.copy()
        return clone

    def __repr__(self) -> str:
        return f"<tensormodes.Generator object at {id(self):#x}>"


def _state_bytes(new_state) -> bytes:
    """The bytes of a state tensor, checked as PyTorch checks them."""
    if not isinstance(new_state, TensorBase):
        raise TypeError(f"expected a tensormodes.ByteTensor, but got {type(new_state).__name__}")
    data = new_state._data
    if type(data) is not np.ndarray or data.dtype != np.uint8:
        raise TypeError("RNG state must be a tensormodes.ByteTensor")
    return np.ascontiguousarray(data).reshape(-1).tobytes()


default_generator = Generator()


def rng(generator: Generator | None) -> MTStream:
    """The stream behind ``generator`` (the default one for None)."""
    if generator is None:
        return default_generator._stream
    if type(generator) is not Generator and not isinstance(generator, Generator):
        raise TypeError(f"argument 'generator' must be tensormodes.Generator, not {type(generator).__name__}")
    return generator._stream


def manual_seed(seed: int) -> Generator:
    """Sets the seed for generating random numbers; returns the default generator.

    >>> import tensormodes as tm
    >>> _ = tm.manual_seed(0); tm.randn(3)
    tensor([ 1.5410, -0.2934, -2.1788])
    """
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Sets the seed of the default generator to a non-deterministic random number; returns it.

    >>> import tensormodes as tm
    >>> 0 <= tm.seed() < 2 ** 64
    True
    """
    return default_generator.seed()


def initial_seed() -> int:
    """The initial seed of the default generator.

    >>> import tensormodes as tm
    >>> _ = tm.manual_seed(42); tm.initial_seed()
    42
    """
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state as a ``uint8`` tensor (PyTorch's 5,056-byte layout).

    >>> import tensormodes as tm
    >>> _ = tm.manual_seed(0); state = tm.get_rng_state(); a = tm.rand(2)
    >>> tm.set_rng_state(state); bool((a == tm.rand(2)).all())
    True
    """
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restore the default generator's state from ``get_rng_state()`` (here or PyTorch's)."""
    default_generator.set_state(new_state)


# -- sampling helpers ------------------------------------------------------------------------------

def _shape(size: tuple, op_name: str) -> tuple[int, ...]:
    for d in size:  # the common call: non-negative ints
        if type(d) is not int or d < 0:
            break
    else:
        if size:
            return size
        raise TypeError(f'{op_name}() missing 1 required positional arguments: "size"')
    return parse_size(size, op_name=op_name)


def _uniform(stream: MTStream, shape, dtype: dt.dtype) -> np.ndarray:
    """Uniform samples in [0, 1) of ``dtype``; real and imaginary parts for complex dtypes."""
    return kernels.uniform(stream, shape, dtype)


def _standard_normal(stream: MTStream, shape, dtype: dt.dtype) -> np.ndarray:
    """Standard normal samples; complex ones have variance 1 split between the parts."""
    return kernels.normal(stream, shape, dtype)


def like_memory_axes(array) -> list[int] | None:
    """The dimensions of ``empty_like(array)`` from outermost to innermost in memory, or None
    when that is row-major. PyTorch's ``empty_like`` keeps the order of the input's strides
    (exactly its strides when it is dense), and its serial samplers fill in memory order."""
    if type(array) is not np.ndarray or array.ndim < 2 or array.flags.c_contiguous or not array.size:
        return None
    return strides_memory_axes(array.shape, array.strides)


def strides_memory_axes(shape: tuple, strides: tuple) -> list[int] | None:
    """``like_memory_axes`` of a tensor of ``shape`` and ``strides``."""

    def inner_first(a: int, b: int) -> int:  # > 0: b belongs inside a
        if strides[a] == 0 or strides[b] == 0:  # a broadcast dimension keeps its place
            return 0
        if strides[a] != strides[b]:
            return 1 if strides[a] > strides[b] else -1
        return 1 if shape[a] > shape[b] else 0

    # PyTorch's stable insertion sort, innermost dimension first
    order = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(order)):
        j = i
        for k in range(i - 1, -1, -1):
            comparison = inner_first(order[k], order[j])
            if comparison > 0:
                order[k], order[j] = order[j], order[k]
                j = k
            elif comparison < 0:
                break
    order.reverse()
    return None if order == sorted(order) else order


def _like_axes(input, memory_format) -> list[int] | None:
    """The memory order of a ``*_like`` result (None: row-major), as PyTorch lays it out."""
    if memory_format is channels_last and np.ndim(input) == 4:
        return [0, 2, 3, 1]
    if memory_format is channels_last_3d and np.ndim(input) == 5:
        return [0, 2, 3, 4, 1]
    return like_memory_axes(input) if memory_format is None or memory_format is preserve_format else None


def _filled_like(input, axes: list[int] | None, sample) -> np.ndarray:
    """``sample(shape, contiguous)`` for a result shaped like ``input`` whose memory order is
    ``axes``: drawn in that order, returned row-major with the values where PyTorch has them."""
    if axes is None:
        return sample(input.shape, True)
    values = sample(tuple(input.shape[axis] for axis in axes), False)
    return np.ascontiguousarray(np.transpose(values, np.argsort(axes)))


def _check_uniform_dtype(dtype: dt.dtype) -> dt.dtype:
    if dtype._category < dt._FLOAT:
        raise not_implemented("check_uniform_bounds", dtype)
    return dtype


def _check_normal_dtype(dtype: dt.dtype) -> dt.dtype:
    if dtype._category < dt._FLOAT:
        raise not_implemented("normal_kernel_cpu", dtype)
    return dtype


def _float_format(value) -> str:
    return format(value, "g")


def _integer_bounds(dtype: dt.dtype, low: int, high: int) -> tuple[int, int]:
    """PyTorch's checks of a ``[low, high)`` integer range for samples of ``dtype``, and the range it
    samples: for a floating dtype, a bound past the integers the dtype holds exactly is first moved
    inward where rounding would carry it outside (``from + 1`` rounding below ``from``, or ``to - 1``
    rounding to ``to`` or above), as PyTorch's ``update_from`` / ``update_to`` do: float32 samples
    ``[0, 2**25 + 7)`` as ``[0, 2**25 + 4)``, since 2**25 + 6 rounds up to 2**25 + 8."""
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if dtype._category == dt._COMPLEX:
        raise not_implemented("random_from_to_kernel_cpu", dtype)
    if dtype._category == dt._FLOAT:
        low, high = _updated_bound(dtype, low, 1), _updated_bound(dtype, high, -1)
        if low >= high:
            raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got "
                               f"from={low} >= to={high}")
    if dtype is dt.bool:
        lowest, highest = 0, 1
    elif dtype._category == dt._INT:
        info = np.iinfo(dtype._np)
        lowest, highest = int(info.min), int(info.max)
    else:
        finfo = dt.finfo(dtype)
        lowest, highest = finfo.min, finfo.max
    name = cpp_type_name(dtype)
    if not lowest <= low <= highest:
        raise RuntimeError(f"from is out of bounds for {name}")
    if not lowest <= high - 1 <= highest:
        raise RuntimeError(f"to - 1 is out of bounds for {name}")
    if dtype._category == dt._FLOAT:
        digits = _DIGITS[dtype]
        for bound, text in ((low, "from"), (high - 1, "to - 1")):
            if abs(bound) > 2 ** digits:
                warnings.warn(
                    f"{text} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations {name} can "
                    "support discrete uniform distribution only within this range. This warning will become an "
                    "error in version 1.7 release, please fix the code in advance", UserWarning, stacklevel=4)
    return low, high


def _updated_bound(dtype: dt.dtype, bound: int, inward: int) -> int:
    """``update_from`` (``inward`` 1) or ``update_to`` (-1): ``bound + inward`` rounded to ``dtype``
    (as C++ casts an int64: to float first for the half types); if that lies beyond ``bound``, it
    moved a step of ``2**(n - digits + 1)`` back, ``2**n`` the highest power of two in
    ``|bound + inward|``. A bound the dtype cannot hold at all is left to the range checks."""
    neighbour = bound + inward
    if abs(neighbour) > 2 ** _DIGITS[dtype] and abs(neighbour) <= dt.finfo(dtype).max:
        rounded = int(kernels.integers_as(np.array([neighbour], np.int64), dtype)[0])
        if (rounded < bound) if inward > 0 else (rounded >= bound):
            return rounded + inward * (1 << (abs(neighbour).bit_length() - 1 - _DIGITS[dtype] + 1))
    return bound


def _integers(stream: MTStream, shape, dtype: dt.dtype, low: int, high: int) -> np.ndarray:
    """Uniform integers from ``[low, high)`` stored as ``dtype``."""
    return kernels.integers_from_to(stream, shape, dtype, low, high)


def _int_arg(value, op_name: str, param: str, position: int) -> int:
    inner = array_of(value)
    if inner is not None and inner.ndim == 0 and inner.dtype.kind in "iu":
        return int(inner)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{op_name}(): argument '{param}' (position {position}) must be int, "
                        f"not {type(value).__name__}")
    return operator.index(value)


# -- meta rules: the result's shape and dtype; nothing is drawn from the caller's generator ---------

# Probes (kernels run on at most one element, for dtypes and errors) draw from this one.
_PROBE_GENERATOR = Generator()


def _quiet(generator):
    """The generator a probe draws from: never the caller's (a wrong type passes through, for
    the kernel's own TypeError)."""
    return _PROBE_GENERATOR if generator is None or isinstance(generator, Generator) else generator


def _tiny(value):
    """A one-element (at most) stand-in for an array or meta array; other values pass through."""
    if type(value) is MetaArray or type(value) is np.ndarray:
        return np.ones(tuple(min(size, 1) for size in value.shape), value.dtype)
    return value


def _run_tiny(opdef, args, kwargs, sizes: dict | None = None):
    """``opdef``'s kernel on tiny arguments (``sizes``: replacement arguments by name), drawing
    from the probe generator; returns (the bound arguments, the kernel's tiny result)."""
    bound = opdef.signature.bind(*args, **kwargs)
    tiny = opdef.signature.bind(*args, **kwargs)
    for name, value in tiny.arguments.items():
        tiny.arguments[name] = _tiny(value)
    tiny.arguments.update(sizes or {})
    if "generator" in opdef.signature.parameters:
        tiny.arguments["generator"] = _quiet(bound.arguments.get("generator"))
    return bound, opdef.kernel(*tiny.args, **tiny.kwargs)


def _on_other_device(bound) -> bool:
    """A ``*_like`` call with a meta input asking for a real device: it gets real samples."""
    device = bound.arguments.get("device")
    return device is not None and not is_meta_device(device)


def _sized_random_meta(op_name: str) -> MetaRule:
    """``rand`` / ``randn``: the size parsed as the kernels parse it, dtype from a tiny draw."""
    def compute(opdef, args, kwargs):
        bound = opdef.signature.bind(*args, **kwargs)
        shape = _shape(tuple(bound.arguments.get("size", ())), op_name)
        _, result = _run_tiny(opdef, (), bound.kwargs, {"size": (tuple(min(s, 1) for s in shape),)})
        return MetaArray(shape, result.dtype)
    return MetaRule(compute, f"{op_name}_meta")


def _like_random_meta(opdef, args, kwargs):
    """``rand_like`` / ``randn_like`` / ``randint_like``: ``input``'s shape (contiguous, as the kernels)."""
    bound = opdef.signature.bind(*args, **kwargs)
    if _on_other_device(bound):
        return opdef.kernel(*args, **kwargs)
    _, result = _run_tiny(opdef, args, kwargs)
    return MetaArray(bound.arguments["input"].shape, result.dtype)


def _same_shape_random_meta(opdef, args, kwargs):
    """Samples shaped like ``input`` (``bernoulli``, ``poisson``): dtype and errors from a tiny draw
    (the value checks see ones, which pass: meta tensors have no values to check)."""
    bound, result = _run_tiny(opdef, args, kwargs)
    return MetaArray(bound.arguments["input"].shape, result.dtype)


def _randint_meta(low=0, high=None, size=None, *, generator=None, dtype=None, device=None, **_):
    low, high, shape = _randint_args(low, high, size)
    check_device(device)
    d = dt.int64 if dtype is None else resolve_dtype(dtype)
    _integer_bounds(d, low, high)
    rng(generator)  # its type checked; nothing drawn
    return MetaArray(shape, d._np)


def _randperm_meta(n, *, generator=None, dtype=dt.int64, device=None, **_):
    n, d = _randperm_plan(n, dtype, device)
    rng(generator)
    return MetaArray((n,), d._np)


def _normal_meta(opdef, args, kwargs):
    bound = opdef.signature.bind(*args, **kwargs)
    mean, std, size = (bound.arguments.get(name, default) for name, default in
                       (("mean", None), ("std", 1.0), ("size", None)))
    tensors = type(mean) in (MetaArray, np.ndarray) or type(std) in (MetaArray, np.ndarray)
    if tensors or not isinstance(size, (tuple, list)):  # the shape comes from the tensors (or an error)
        _, result = _run_tiny(opdef, args, kwargs)
        return MetaArray(check_same_shape_or_broadcast(np.shape(mean), np.shape(std)), result.dtype)
    shape = parse_size((size,), op_name="normal")
    _, result = _run_tiny(opdef, args, kwargs, {"size": tuple(min(s, 1) for s in shape)})
    return MetaArray(shape, result.dtype)


def _multinomial_meta(input, num_samples, replacement=False, *, generator=None):
    num_samples = _multinomial_checks(input, num_samples, replacement)
    rng(generator)
    return MetaArray((num_samples,) if input.ndim == 1 else (input.shape[0], num_samples), np.dtype(np.int64))


# -- random factories ---------------------------------------------------------------------------------

@op(meta=_sized_random_meta("rand"),
    errors=(Sample((2,), {"dtype": dt.int64}), Sample((-1,))),
    random=True, factory=True, out=True, samples=(
    Sample((2, 3)), Sample(((4,),), {"dtype": dt.float64}), Sample(((),)), Sample((2,), {"dtype": dt.float16}),
    Sample((3,), {"dtype": dt.complex64}), Sample(([2, 2],), {"dtype": dt.bfloat16})),
    aten={"rand.default": ("generator",)}, tags=("core",))
def rand(*size: int, generator: Generator | None = None, dtype: dt.dtype | None = None, layout=None,
         device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Returns a tensor filled with random numbers from a uniform distribution on ``[0, 1)``.

    >>> import tensormodes as tm
    >>> x = tm.rand(2, 3)
    >>> x.shape, bool(((0 <= x) & (x < 1)).all())
    (tensormodes.Size([2, 3]), True)
    """
    shape = _shape(size, "rand")
    if device is not None:
        check_device(device)
    d = _DEFAULT_DTYPE.get()[0] if dtype is None else _check_uniform_dtype(resolve_dtype(dtype))
    return _uniform(rng(generator), shape, d)


@op(meta=_sized_random_meta("randn"),
    errors=(Sample((2,), {"dtype": dt.int32}),),
    random=True, factory=True, out=True, samples=(
    Sample((2, 3)), Sample(((4,),), {"dtype": dt.float64}), Sample(((),)), Sample((2,), {"dtype": dt.float16}),
    Sample((3,), {"dtype": dt.complex128})), aten={"randn.default": ("generator",)}, tags=("core",))
def randn(*size: int, generator: Generator | None = None, dtype: dt.dtype | None = None, layout=None,
          device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Returns a tensor filled with random numbers from the standard normal distribution.

    Complex dtypes sample each part with variance 1/2, so that the complex
    variance is 1.

    >>> import tensormodes as tm
    >>> tm.randn(2, 3).shape, tm.randn(2, dtype=tm.float64).dtype
    (tensormodes.Size([2, 3]), tensormodes.float64)
    """
    shape = _shape(size, "randn")
    if device is not None:
        check_device(device)
    d = _DEFAULT_DTYPE.get()[0] if dtype is None else _check_normal_dtype(resolve_dtype(dtype))
    return _standard_normal(rng(generator), shape, d)


@op(meta=rule(_randint_meta),
    errors=(Sample((5, 2, (3,))), Sample((0, 300, (2,)), {"dtype": dt.uint8}), Sample((5,))),
    random=True, factory=True, out=True, samples=(
    Sample((5, (3,))), Sample((2, 5, (2, 3))), Sample((-3, 3, [4]), {"dtype": dt.int8}), Sample((10, ())),
    Sample((0, 2, (3,)), {"dtype": dt.bool}), Sample((5,), {"size": (2,), "dtype": dt.float32}),
    Sample((), {"low": 1, "high": 4, "size": (3,)}), Sample((), {"high": 4, "size": (3,)})),
    aten={"randint.default": ("low", "generator"),
          "randint.default@short": ("size", "generator", "low: SymInt high=", "high: SymInt[] size="),
          "randint.default@size": ("high", "generator", "low: SymInt high="),
          "randint.low": ("generator", "low: SymInt=")},
    schema={"high": "SymInt=", "size": "SymInt[]=", "dtype": "ScalarType?=4"})
def randint(low: int = 0, high: int | None = None, size=None, *, generator: Generator | None = None,
            dtype: dt.dtype | None = None, layout=None, device=None, requires_grad: bool = False,
            pin_memory: bool = False) -> Tensor:
    """Returns a tensor filled with random integers drawn uniformly from ``[low, high)``.

    ``randint(high, size)`` and ``randint(low, high, size)`` are both accepted;
    the dtype is ``int64`` unless ``dtype`` is given.

    >>> import tensormodes as tm
    >>> x = tm.randint(3, 10, (2, 2))
    >>> x.dtype, x.shape, bool(((3 <= x) & (x < 10)).all())
    (tensormodes.int64, tensormodes.Size([2, 2]), True)
    """
    low, high, shape = _randint_args(low, high, size)
    check_device(device)
    d = dt.int64 if dtype is None else resolve_dtype(dtype)
    low, high = _integer_bounds(d, low, high)
    return _integers(rng(generator), shape, d, low, high)


def _randint_args(low, high, size) -> tuple[int, int, tuple[int, ...]]:
    """``randint``'s two call forms, checked: (low, high, shape)."""
    high_position = 2
    if size is None:
        if high is None:
            raise TypeError("randint() received an invalid combination of arguments: expected "
                            "(int high, tuple of ints size) or (int low, int high, tuple of ints size)")
        if isinstance(high, numbers.Integral) or array_of(high) is not None:
            raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not "
                            f"{type(high).__name__}")
        low, high, size, high_position = 0, low, high, 1
    elif high is None:
        low, high, high_position = 0, low, 1
    low, high = _int_arg(low, "randint", "low", 1), _int_arg(high, "randint", "high", high_position)
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not {type(size).__name__}")
    return low, high, parse_size((size,), op_name="randint")


@op(meta=rule(_randperm_meta),
    errors=(Sample((-1,)), Sample((3,), {"dtype": dt.bool}), Sample((300,), {"dtype": dt.int8})),
    random=True, factory=True, out=True, samples=(
    Sample((5,)), Sample((0,)), Sample((6,), {"dtype": dt.float32}), Sample((100,), {"dtype": dt.int8}),
    Sample((7,), {"generator": None})),
    aten={"randperm.default": ("generator",), "randperm.generator": ("generator: Generator?=", "-core")},
    schema={"n": "SymInt", "dtype": "ScalarType?=4"}, tags=("core",))
def randperm(n: int, *, generator: Generator | None = None, dtype: dt.dtype = dt.int64, layout=None,
             device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Returns a random permutation of the integers from ``0`` to ``n - 1``.

    >>> import tensormodes as tm
    >>> p = tm.randperm(4)
    >>> p.dtype, sorted(p.tolist())
    (tensormodes.int64, [0, 1, 2, 3])
    """
    n, d = _randperm_plan(n, dtype, device)
    return kernels.randperm(rng(generator), n).astype(d._np)


def _randperm_plan(n, dtype, device) -> tuple[int, dt.dtype]:
    """``randperm``'s checked arguments: (n, the result dtype)."""
    n = _int_arg(n, "randperm", "n", 1)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    check_device(device)
    d = dt.int64 if dtype is None else resolve_dtype(dtype)
    if d is dt.bool or d._category == dt._COMPLEX:
        raise not_implemented("randperm", d)
    if d._category == dt._FLOAT and d in (dt.float16, dt.float32, dt.float64) and n > 2 ** _DIGITS[d] + 1:
        raise RuntimeError(f"n cannot be greater than {'2^24+1' if d is dt.float32 else 2 ** _DIGITS[d] + 1} "
                           f"for {scalar_type_name(d)} type.")
    if d._category == dt._INT and n:
        checked_fill_value(n - 1, d)
    return n, d


@op(meta=MetaRule(_like_random_meta, "rand_like"),
    errors=(Sample((TensorSpec((2,), "int64"),)),),
    random=True, factory=True, samples=(Sample((M23,)), Sample((M23,), {"dtype": dt.float64}),
                           Sample((TensorSpec((), "float16"),)), Sample((TensorSpec((2,), "complex64"),))),
    aten={"rand_like.default": ("generator",)})
def rand_like(input: Tensor, *, generator: Generator | None = None, dtype: dt.dtype | None = None, layout=None,
              device=None, requires_grad: bool = False, memory_format=None, pin_memory: bool = False) -> Tensor:
    """Returns a tensor with the size (and, by default, dtype) of ``input``, filled with random
    numbers from a uniform distribution on ``[0, 1)``.

    >>> import tensormodes as tm
    >>> tm.rand_like(tm.zeros(2, dtype=tm.float64)).dtype
    tensormodes.float64
    """
    check_device(device)
    d = _check_uniform_dtype(dt.NP_TO_DTYPE[input.dtype] if dtype is None else resolve_dtype(dtype))
    stream = rng(generator)
    return _filled_like(input, _like_axes(input, memory_format), lambda shape, _: _uniform(stream, shape, d))


@op(meta=MetaRule(_like_random_meta, "randn_like"),
    errors=(Sample((M23,), {"dtype": dt.int64}),),
    random=True, factory=True, samples=(Sample((M23,)), Sample((M23,), {"dtype": dt.float64}),
                           Sample((TensorSpec((2,), "int32"),), {"dtype": dt.float16})),
    aten={"randn_like.default": ("generator",)})
def randn_like(input: Tensor, *, generator: Generator | None = None, dtype: dt.dtype | None = None, layout=None,
               device=None, requires_grad: bool = False, memory_format=None, pin_memory: bool = False) -> Tensor:
    """Returns a tensor with the size (and, by default, dtype) of ``input``, filled with random
    numbers from the standard normal distribution.

    >>> import tensormodes as tm
    >>> tm.randn_like(tm.zeros(2, 3)).shape
    tensormodes.Size([2, 3])
    """
    check_device(device)
    d = _check_normal_dtype(dt.NP_TO_DTYPE[input.dtype] if dtype is None else resolve_dtype(dtype))
    stream = rng(generator)
    # a result that is not row-major takes PyTorch's element-by-element normals
    return _filled_like(input, _like_axes(input, memory_format),
                        lambda shape, contiguous: kernels.normal(stream, shape, d, contiguous=contiguous))


@op(meta=MetaRule(_like_random_meta, "randint_like"),
    errors=(Sample((M23, 3, 1)), Sample((TensorSpec((2,), "int8"), 0, 300))),
    random=True, factory=True, samples=(Sample((M23, 5)), Sample((TensorSpec((4,), "int32"), 2, 9)),
                           Sample((M23, 3), {"dtype": dt.int64}), Sample((M23,), {"low": 1, "high": 3})),
    aten={
        "randint_like.default": ("low", "generator"),
        "randint_like.default@short": ("high", "generator", "low: SymInt high="),
        "randint_like.low_dtype": ("generator", "low: SymInt="),
    },
    schema={"high": "SymInt="})
def randint_like(input: Tensor, low: int = 0, high: int | None = None, *, generator: Generator | None = None,
                 dtype: dt.dtype | None = None, layout=None, device=None, requires_grad: bool = False,
                 memory_format=None, pin_memory: bool = False) -> Tensor:
    """Returns a tensor with the size (and, by default, dtype) of ``input``, filled with random
    integers drawn uniformly from ``[low, high)``; ``randint_like(input, high)`` starts at 0.

    >>> import tensormodes as tm
    >>> x = tm.randint_like(tm.zeros(3), 10)
    >>> x.dtype, bool(((0 <= x) & (x < 10)).all())
    (tensormodes.float32, True)
    """
    if high is None:
        low, high = 0, low
    low, high = _int_arg(low, "randint_like", "low", 2), _int_arg(high, "randint_like", "high", 3)
    check_device(device)
    d = dt.NP_TO_DTYPE[input.dtype] if dtype is None else resolve_dtype(dtype)
    low, high = _integer_bounds(d, low, high)
    stream = rng(generator)
    return _filled_like(input, _like_axes(input, memory_format),
                        lambda shape, _: _integers(stream, shape, d, low, high))


def _std_check(std) -> None:
    if type(std) is np.ndarray:
        if std.size and not (std >= 0).all():
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_float_format(std)}")


@op(meta=MetaRule(_normal_meta, "normal"),
    errors=(Sample((TensorSpec((2, 3)), TensorSpec((4,)))), Sample((0.0, -1.0, (2,))),
            Sample((TensorSpec((2,), "int64"), 1.0))),
    random=True, factory=True, out=True, samples=(
    Sample((TensorSpec((2, 3), "float32", 0, 0), TensorSpec((2, 3), "float32", 0, 0))),
    Sample((TensorSpec((3,), "float64"), 0.0)), Sample((1.5, TensorSpec((2, 2), "float32", 0, 0))),
    Sample((2.0, 0.0, (2, 3))), Sample((TensorSpec((2, 3)), TensorSpec((3,), "float32", 0, 0))),
    Sample((0.0, 1.0, (4,)), {"dtype": dt.float64}), Sample((TensorSpec((3,), "float16"),), {"std": 0.0})),
    aten={
        "normal.Tensor_Tensor": ("size", "dtype", "layout", "device", "pin_memory", "std: Tensor="),
        "normal.Tensor_float": ("size", "dtype", "layout", "device", "pin_memory", "std: float"),
        "normal.float_Tensor": ("size", "dtype", "layout", "device", "pin_memory", "mean: float", "std: Tensor="),
        "normal.float_float": ("mean: float", "std: float=", "size: SymInt[]="),
    })
def normal(mean: Tensor | Number, std: Tensor | Number = 1.0, size=None, *, generator: Generator | None = None,
           dtype: dt.dtype | None = None, layout=None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """Returns a tensor of random numbers drawn from normal distributions with the given
    ``mean`` and ``std`` (tensors, broadcast together, or numbers with ``size``).

    The result has ``mean``'s dtype when it is a tensor, else ``std``'s; with two
    numbers, ``size`` gives the shape and ``dtype`` (default: the default dtype)
    the dtype.

    >>> import tensormodes as tm
    >>> tm.normal(tm.tensor([0., 10.]), 0.0)
    tensor([ 0., 10.])
    >>> tm.normal(2.0, 3.0, size=(1, 4)).shape
    tensormodes.Size([1, 4])
    """
    stream = rng(generator)
    mean_is_array, std_is_array = type(mean) is np.ndarray, type(std) is np.ndarray
    if not mean_is_array and not std_is_array:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments: with a number mean and std, "
                            "'size' is required")
        if not isinstance(size, (tuple, list)):
            raise TypeError(f"normal(): argument 'size' (position 3) must be tuple of ints, not {type(size).__name__}")
        shape = parse_size((size,), op_name="normal")
        check_device(device)
        d = _check_normal_dtype(_DEFAULT_DTYPE.get()[0] if dtype is None else resolve_dtype(dtype))
        _std_check(std)
        return kernels.normal(stream, shape, d, float(mean), float(std))
    if size is not None:
        raise TypeError("normal() received an invalid combination of arguments: 'size' is only accepted with "
                        "a number mean and std")
    d = dt.NP_TO_DTYPE[mean.dtype] if mean_is_array else dt.NP_TO_DTYPE[std.dtype]
    _check_normal_dtype(d)
    shape = check_same_shape_or_broadcast(np.shape(mean), np.shape(std))
    _std_check(std)
    # PyTorch: a standard sample (scaled by a number std), then ``mul_(std)`` and ``add_(mean)``
    # in the result's dtype
    if std_is_array:
        sample = kernels.normal(stream, shape, d)
        sample = np.multiply(sample, std.real if not d.is_complex else std, dtype=d._np)
    else:
        sample = kernels.normal(stream, shape, d, 0.0, float(std))
    return np.asarray(np.add(sample, mean, dtype=d._np) if mean_is_array else np.add(sample, d._np.type(mean)),
                      d._np)


_complex_refused = no_complex_autograd("bernoulli")


def _bernoulli_grad(grad, p):
    # PyTorch: a zero gradient for the probabilities, and none at all with a fixed ``p``
    if p is not None:
        raise RuntimeError("derivative for aten::bernoulli is not implemented")
    return ops.zeros_like(grad)


@op(meta=MetaRule(_same_shape_random_meta, "bernoulli"),
    errors=(Sample((TensorSpec((2,), "int64"),)), Sample((M23, 1.5))),
    method=True, out=True, grad=_bernoulli_grad,
    # (with a fixed p PyTorch records its not-implemented node, complex or not)
    differentiable=lambda self, p=None, *rest: p is not None or _complex_refused(self), samples=(
    Sample((TensorSpec((2, 3), "float32", 0, 0),)), Sample((TensorSpec((3,), "float64", 1, 1),)),
    Sample((TensorSpec((2, 2), "float32"), 1.0)), Sample((TensorSpec((3,), "int64"), 0.0)),
    Sample((TensorSpec((2,), "float16", 1, 1),))),
    aten={"bernoulli.default": ("p",), "bernoulli.p": ("p: float=", "out=float_out", "out+generated")})
def bernoulli(input: Tensor, p: float | None = None, *, generator: Generator | None = None) -> Tensor:
    """Draws binary random numbers (0 or 1) from Bernoulli distributions.

    Each element of ``input`` is the probability of drawing 1 there; with ``p``,
    every element is drawn with probability ``p`` instead. The result has
    ``input``'s dtype.

    >>> import tensormodes as tm
    >>> tm.bernoulli(tm.tensor([0., 1., 1.]))
    tensor([0., 1., 1.])
    """
    d = dt.NP_TO_DTYPE[input.dtype]
    if p is None:
        # PyTorch's kernel (and its dtype check) runs only when there is data.
        if input.size and (d._category < dt._FLOAT or d._category == dt._COMPLEX):
            raise not_implemented("bernoulli_tensor_cpu_self_" if d.is_complex else "bernoulli_tensor_cpu_p_", d)
        if input.size and not ((input >= 0) & (input <= 1)).all():
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                               "message be improved?  If so, please report an enhancement request to PyTorch.)")
        return kernels.bernoulli_tensor(rng(generator), input.shape, d, input)
    return _bernoulli_scalar(input, p, generator)


def _bernoulli_scalar(input: np.ndarray, p, generator) -> np.ndarray:
    p = python_scalar(p, "bernoulli", "p")
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_float_format(p)}")
    if input.dtype.kind == "c" and input.size:  # no kernel runs for no data
        raise not_implemented("bernoulli_scalar_cpu_", dt.NP_TO_DTYPE[input.dtype])
    return kernels.bernoulli_scalar(rng(generator), input.shape, dt.NP_TO_DTYPE[input.dtype], p)


@op(meta=rule(_multinomial_meta),
    errors=(Sample((TensorSpec((3,), "float32", 1, 1), 4)), Sample((TensorSpec((2, 2, 2)), 1)),
            Sample((TensorSpec((3,), "int64"), 1))),
    method=True, out=True, differentiable=False, samples=(
    Sample((TensorSpec((1,), "float32", 1, 1), 1)), Sample((TensorSpec((3, 1), "float64", 0.5, 2), 4, True)),
    Sample((TensorSpec((2, 1), "float32", 1, 3),), {"num_samples": 1, "replacement": False})))
def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None) -> Tensor:
    """Returns indices sampled from the multinomial distributions given by the rows of ``input``.

    Rows hold non-negative weights (they need not sum to 1). Without
    ``replacement`` an index is drawn at most once per row; categories of weight
    zero come last.

    >>> import tensormodes as tm
    >>> tm.multinomial(tm.tensor([0., 1., 0.]), 1)
    tensor([1])
    >>> tm.multinomial(tm.tensor([[0., 5.], [3., 0.]]), 2, replacement=True)
    tensor([[1, 1],
            [0, 0]])
    """
    num_samples = _multinomial_checks(input, num_samples, replacement)
    categories = input.shape[-1]
    if categories == 0:  # no category (past the checks of num_samples)
        if input.ndim == 1:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        if input.shape[0]:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    weights = input.astype(np.float64).reshape(-1, categories)
    if weights.size and not (np.isfinite(weights) & (weights >= 0)).all():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if weights.shape[0] and categories and not (weights.sum(axis=1) > 0).all():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    stream = rng(generator)
    rows = input.reshape(-1, categories)
    if replacement and num_samples > 1:
        result = _multinomial_with_replacement(stream, rows, num_samples)
    else:
        # PyTorch's draw: ``input / q`` with q ~ Exp(1) of the input's dtype; the largest
        # ``num_samples`` keys win (a sample without replacement; one sample either way).
        # (laid out as PyTorch's empty_like(input): a transposed input draws in its memory order)
        d = dt.NP_TO_DTYPE[input.dtype]
        q = _filled_like(rows, like_memory_axes(input), lambda shape, _: kernels.exponential(stream, shape, d, 1.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = np.divide(rows, q, dtype=input.dtype)
        result = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    result = result.astype(np.int64)
    return result.reshape(num_samples) if input.ndim == 1 else result


def _multinomial_with_replacement(stream, rows: np.ndarray, num_samples: int) -> np.ndarray:
    """PyTorch's kernel: per row, the cumulative sums (float for the half types) divided by
    the total with the last set to 1, then the first bucket at or above each double uniform."""
    acc = np.float32 if rows.dtype in (np.float16, dt.bfloat16._np) else rows.dtype
    cumulative = np.cumsum(rows.astype(acc), axis=1, dtype=acc)
    if cumulative.size:
        cumulative /= cumulative[:, -1:]
        cumulative[:, -1] = 1
    draws = kernels.uniform53(stream, rows.shape[0] * num_samples).reshape(rows.shape[0], num_samples)
    result = np.empty((rows.shape[0], num_samples), np.int64)
    for i in range(rows.shape[0]):
        result[i] = np.searchsorted(cumulative[i].astype(np.float64), draws[i], side="left")
    return result


def _multinomial_checks(input, num_samples, replacement: bool) -> int:
    """``multinomial``'s checks of metadata and arguments; returns ``num_samples`` as an int."""
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    d = dt.NP_TO_DTYPE[input.dtype]
    if d._category != dt._FLOAT:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {scalar_type_name(d)}")
    num_samples = _int_arg(num_samples, "multinomial", "num_samples", 2)
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > input.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    return num_samples
