"""The in-place samplers: ``Tensor.uniform_``, ``normal_``, ``random_``, ``bernoulli_``,
``exponential_``, ``geometric_``, ``cauchy_`` and ``log_normal_``. The generators, the draws they
share and the random factories are in ``random.py``.

PyTorch has these only as Tensor methods. Their kernels write a fresh sample into the input
array and return it; they are declared as methods that mutate their input, so the generated
method bumps the tensor's version. The method returns a tensor sharing the input's memory
(PyTorch returns the very same tensor object).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from numbers import Number

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from . import _random_kernels as kernels
from ._samples import M23
from .common import cpp_type_name, not_implemented, scalar_type_name
from .creation import python_scalar
from .meta_rules import MetaRule
from .random import (
    Generator,
    _bernoulli_scalar,
    _check_normal_dtype,
    _check_uniform_dtype,
    _float_format,
    _int_arg,
    _integer_bounds,
    _quiet,
    _std_check,
    _tiny,
    rng,
    strides_memory_axes,
)
from .registry import Sample, Tensor, TensorSpec, op

# -- the meta rule: the written-to tensor's checks; nothing is drawn from the caller's generator -----

def _sampler_meta(opdef, args, kwargs):
    """The in-place samplers: the written-to tensor's checks, the argument checks of a tiny
    draw; the tensor itself is the result."""
    bound = opdef.signature.bind(*args, **kwargs)
    input = bound.arguments["input"]
    if any(stride == 0 and size > 1 for stride, size in zip(input.elem_strides, input.shape, strict=True)):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    tiny = opdef.signature.bind(*args, **kwargs)
    for name, value in tiny.arguments.items():
        tiny.arguments[name] = _tiny(value)
    tiny.arguments["generator"] = _quiet(bound.arguments.get("generator"))
    opdef.kernel.__wrapped__(*tiny.args, **tiny.kwargs)
    p = bound.arguments.get("p")
    if type(p) in (MetaArray, np.ndarray):  # bernoulli_'s tensor p: the tiny draw could not see its shape
        if p.ndim > input.ndim or any(a != b and a != 1 for a, b in zip(p.shape[::-1], input.shape[::-1],
                                                                        strict=False)):
            raise RuntimeError(_expand_error(p.shape, input.shape))
    return input


_sampler = MetaRule(_sampler_meta, "sampler")


# -- the samplers ----------------------------------------------------------------------------------

def _writes_into_input(sample):
    """The kernel of an in-place sampler from a function returning a fresh sample of
    ``input``'s shape and dtype: the sample is written into ``input``, which is returned.
    (Declared ``mutates``, so the generated method bumps the tensor's version.)"""

    @functools.wraps(sample)
    def kernel(input, *args, **kwargs):
        # (an empty tensor may have zero strides: it has no element to overlap)
        overlapping = input.size and any(stride == 0 and size > 1
                                         for stride, size in zip(input.strides, input.shape, strict=True))
        if overlapping or not input.flags.writeable:  # an expanded (broadcast) tensor
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                               "single memory location. Please clone() the tensor before performing the operation.")
        np.copyto(input, sample(input, *args, **kwargs), casting="unsafe")
        return input

    return kernel


def _in_memory_order(input: np.ndarray, sample: Callable[[tuple], np.ndarray]) -> np.ndarray:
    """``sample(shape)`` laid out as PyTorch's serial kernels write a strided tensor: in the
    order of its memory (dimensions by decreasing stride), returned in ``input``'s shape."""
    if input.ndim < 2 or input.flags.c_contiguous:
        return sample(input.shape)
    order = _memory_axes(input)
    values = sample(tuple(input.shape[axis] for axis in order))
    return np.transpose(values, np.argsort(order))


_F23_ZERO = TensorSpec((2, 3), "float32", 0, 0)


@op(meta=_sampler,
    errors=(Sample((M23, 2.0, 1.0)), Sample((TensorSpec((2,), "int64"),))),
    function=False, method="uniform_", mutates=True, differentiable=False, samples=(
    Sample((_F23_ZERO, 2.0, 2.0)), Sample((TensorSpec((3,), "float64"), -1, -1)),
    Sample((TensorSpec((2,), "complex64"), 1.0, 1.0))), tags=("inplace",))
@_writes_into_input
def uniform_(input: Tensor, from_: float = 0, to: float = 1, *, generator: Generator | None = None) -> Tensor:
    """Fills the tensor with numbers drawn uniformly from ``[from_, to)`` (PyTorch calls the
    first parameter ``from``, a Python keyword); returns it.

    >>> import tensormodes as tm
    >>> x = tm.zeros(3).uniform_(-1, 1)
    >>> bool(((-1 <= x) & (x < 1)).all())
    True
    """
    d = _check_uniform_dtype(dt.NP_TO_DTYPE[input.dtype])
    low, high = python_scalar(from_, "uniform_", "from"), python_scalar(to, "uniform_", "to")
    if low > high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_float_format(low)} > "
                           f"to={_float_format(high)}")
    real = d.to_real()
    limit = dt.finfo(real).max
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"{'from' if not math.isfinite(low) else 'to'} is out of bounds for "
                           f"{cpp_type_name(real)}")
    if high - low > limit:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{scalar_type_name(real)}>::max(), but "
                           f"found to={_float_format(high)} and from={_float_format(low)} which result in to-from "
                           "to exceed the limit")
    stream = rng(generator)
    return _in_memory_order(input, lambda shape: kernels.uniform(stream, shape, d, low, high))


@op(meta=_sampler,
    errors=(Sample((M23, 0.0, -1.0)), Sample((TensorSpec((2,), "int32"),))),
    function=False, method="normal_", mutates=True, differentiable=False, samples=(
    Sample((_F23_ZERO, 3.0, 0.0)), Sample((TensorSpec((3,), "float64"),), {"mean": -1.0, "std": 0.0}),
    Sample((TensorSpec((2,), "complex64"), 1.0, 0.0))), tags=("inplace",))
@_writes_into_input
def normal_(input: Tensor, mean: float = 0, std: float = 1, *, generator: Generator | None = None) -> Tensor:
    """Fills the tensor with samples from the normal distribution N(``mean``, ``std``\\ :sup:`2`);
    returns it. Complex tensors get ``mean`` in both parts.

    >>> import tensormodes as tm
    >>> tm.ones(2).normal_(5.0, 0.0)
    tensor([5., 5.])
    """
    d = _check_normal_dtype(dt.NP_TO_DTYPE[input.dtype])
    mean, std = python_scalar(mean, "normal_", "mean"), python_scalar(std, "normal_", "std")
    _std_check(std)
    stream = rng(generator)
    contiguous = input.flags.c_contiguous
    return _in_memory_order(input, lambda shape: kernels.normal(stream, shape, d, mean, std, contiguous))


@op(meta=_sampler,
    errors=(Sample((TensorSpec((2,), "int8"), 0, 300)), Sample((TensorSpec((2,), "complex64"), 0, 3))),
    function=False, method="random_", mutates=True, differentiable=False, samples=(
    Sample((TensorSpec((2, 3), "int64"), 0, 1)), Sample((TensorSpec((3,), "float32"), 4, 5)),
    Sample((TensorSpec((4,), "bool"), 1)), Sample((TensorSpec((3,), "int8"), -3, -2))),
    aten={
        "random_.default": ("from_", "to"),
        "random_.to": ("to", "from_: int to="),
        "random_.from": ("from_: int from=", "to: int?="),
    },
    tags=("inplace",))
@_writes_into_input
def random_(input: Tensor, from_: int | None = None, to: int | None = None, *,
            generator: Generator | None = None) -> Tensor:
    """Fills the tensor with integers drawn uniformly from ``[from_, to)``; returns it.

    ``random_(to)`` draws from ``[0, to)``; ``random_()`` from ``[0, 2**digits]``
    for floating dtypes (the integers they hold exactly) and from all
    non-negative values for integer dtypes.

    >>> import tensormodes as tm
    >>> x = tm.zeros(4, dtype=tm.int32).random_(3, 7)
    >>> bool(((3 <= x) & (x < 7)).all())
    True
    """
    d = dt.NP_TO_DTYPE[input.dtype]
    if d._category == dt._COMPLEX:
        raise not_implemented("random_kernel_cpu", d)
    if from_ is None and to is None:
        stream = rng(generator)
        return _in_memory_order(input, lambda shape: kernels.integers_default(stream, shape, d))
    if to is None:
        low, high = 0, _int_arg(from_, "random_", "to", 1)
    else:
        low = 0 if from_ is None else _int_arg(from_, "random_", "from", 1)
        high = _int_arg(to, "random_", "to", 2)
    low, high = _integer_bounds(d, low, high)
    stream = rng(generator)
    return _in_memory_order(input, lambda shape: kernels.integers_from_to(stream, shape, d, low, high))


@op(meta=_sampler,
    errors=(Sample((M23, 1.5)), Sample((M23, TensorSpec((4,), "float32", 0, 0)))),
    function=False, method="bernoulli_", mutates=True, differentiable=False, samples=(
    Sample((_F23_ZERO, 1.0)), Sample((TensorSpec((3,), "int64"), 0.0)),
    Sample((TensorSpec((2, 2), "float32"), TensorSpec((2,), "float32", 1, 1))),
    Sample((TensorSpec((3,), "bool"),), {"p": 0.0})),
    aten={"bernoulli_.float": ("p: float",), "bernoulli_.Tensor": ("p: Tensor=",)}, tags=("inplace",))
@_writes_into_input
def bernoulli_(input: Tensor, p: Tensor | Number = 0.5, *, generator: Generator | None = None) -> Tensor:
    """Fills the tensor with 0 or 1, each element 1 with probability ``p`` (a number, or a
    tensor broadcast to the tensor's shape); returns it.

    >>> import tensormodes as tm
    >>> tm.zeros(3).bernoulli_(1.0)
    tensor([1., 1., 1.])
    """
    if type(p) is not np.ndarray:  # drawn in memory order, as the other samplers
        return _in_memory_order(input, lambda shape: _bernoulli_scalar(
            np.broadcast_to(np.zeros((), input.dtype), shape), p, generator))
    pd = dt.NP_TO_DTYPE[p.dtype]
    if input.size:  # PyTorch's kernel (and its dtype checks) runs only when there is data
        if input.dtype.kind == "c":
            raise not_implemented("bernoulli_tensor_cpu_self_", dt.NP_TO_DTYPE[input.dtype])
        if pd._category != dt._FLOAT:
            raise not_implemented("bernoulli_tensor_cpu_p_", pd)
    if p.ndim > input.ndim or any(a != b and a != 1 for a, b in zip(p.shape[::-1], input.shape[::-1], strict=False)):
        raise RuntimeError(_expand_error(p.shape, input.shape))
    if p.size and not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                           "message be improved?  If so, please report an enhancement request to PyTorch.)")
    stream, d = rng(generator), dt.NP_TO_DTYPE[input.dtype]
    p = np.broadcast_to(p, input.shape)
    return _in_memory_order(input, lambda shape: kernels.bernoulli_tensor(
        stream, shape, d, np.transpose(p, _memory_axes(input)) if shape != input.shape else p))


def _memory_axes(input: np.ndarray) -> list[int]:
    return strides_memory_axes(input.shape, input.strides) or list(range(input.ndim))


def _expand_error(source: tuple, target: tuple) -> str:
    if len(source) > len(target):
        return (f"expand(tensormodes.FloatTensor{{{list(source)}}}, size={list(target)}): the number of sizes "
                f"provided ({len(target)}) must be greater or equal to the number of dimensions in the tensor "
                f"({len(source)})")
    for i in range(1, len(source) + 1):
        if source[-i] != target[-i] and source[-i] != 1:
            return (f"The expanded size of the tensor ({target[-i]}) must match the existing size ({source[-i]}) "
                    f"at non-singleton dimension {len(target) - i}.  Target sizes: {list(target)}.  "
                    f"Tensor sizes: {list(source)}")
    return "cannot expand"


def _continuous_only(input: np.ndarray, distribution: str, name_of) -> dt.dtype:
    d = dt.NP_TO_DTYPE[input.dtype]
    if d._category != dt._FLOAT:
        raise RuntimeError(f"{distribution} distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {name_of(d)}")
    return d


@op(meta=_sampler,
    errors=(Sample((M23, -1.0)), Sample((TensorSpec((2,), "int64"),))),
    function=False, method="exponential_", mutates=True, differentiable=False, samples=(
    Sample((_F23_ZERO, math.inf)), Sample((TensorSpec((3,), "float64"),), {"lambd": math.inf})), tags=("inplace",))
@_writes_into_input
def exponential_(input: Tensor, lambd: float = 1, *, generator: Generator | None = None) -> Tensor:
    """Fills the tensor with samples from the exponential distribution of rate ``lambd``;
    returns it.

    >>> import tensormodes as tm
    >>> bool((tm.zeros(5).exponential_(2.0) >= 0).all())
    True
    """
    _continuous_only(input, "Exponential", scalar_type_name)
    lambd = python_scalar(lambd, "exponential_", "lambd")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_float_format(lambd)}")
    stream, d = rng(generator), dt.NP_TO_DTYPE[input.dtype]
    return _in_memory_order(input, lambda shape: kernels.exponential(stream, shape, d, lambd))


@op(meta=_sampler,
    errors=(Sample((M23, 1.5)),),
    function=False, method="geometric_", mutates=True, differentiable=False, samples=(
    Sample((_F23_ZERO, 1 - 1e-12)), Sample((TensorSpec((3,), "int64"),), {"p": 1 - 1e-12})), tags=("inplace",))
@_writes_into_input
def geometric_(input: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    """Fills the tensor with samples from the geometric distribution: the number of
    Bernoulli(``p``) trials up to and including the first success; returns it.

    >>> import tensormodes as tm
    >>> bool((tm.zeros(5, dtype=tm.int64).geometric_(0.5) >= 1).all())
    True
    """
    p = python_scalar(p, "geometric_", "p")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_float_format(p)}")
    if input.dtype == np.bool_:
        raise not_implemented("geometric_cpu", dt.bool)
    stream, d = rng(generator), dt.NP_TO_DTYPE[input.dtype]
    return _in_memory_order(input, lambda shape: kernels.geometric(stream, shape, d, p))


@op(meta=_sampler,
    errors=(Sample((M23, 0.0, -1.0)),),
    function=False, method="cauchy_", mutates=True, differentiable=False, samples=(
    Sample((_F23_ZERO, 2.0, 1e-30)),), tags=("inplace",))
@_writes_into_input
def cauchy_(input: Tensor, median: float = 0, sigma: float = 1, *, generator: Generator | None = None) -> Tensor:
    """Fills the tensor with samples from the Cauchy distribution with location ``median``
    and scale ``sigma``; returns it.

    >>> import tensormodes as tm
    >>> tm.zeros(2).cauchy_().shape
    tensormodes.Size([2])
    """
    _continuous_only(input, "Cauchy", cpp_type_name)
    median, sigma = python_scalar(median, "cauchy_", "median"), python_scalar(sigma, "cauchy_", "sigma")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_float_format(sigma)}")
    stream, d = rng(generator), dt.NP_TO_DTYPE[input.dtype]
    return _in_memory_order(input, lambda shape: kernels.cauchy(stream, shape, d, median, sigma))


@op(meta=_sampler,
    errors=(Sample((M23, 0.0, -1.0)),),
    function=False, method="log_normal_", mutates=True, differentiable=False, samples=(
    Sample((_F23_ZERO, 0.5, 1e-30)),), tags=("inplace",))
@_writes_into_input
def log_normal_(input: Tensor, mean: float = 1, std: float = 2, *, generator: Generator | None = None) -> Tensor:
    """Fills the tensor with samples from the log-normal distribution: ``exp`` of
    N(``mean``, ``std``\\ :sup:`2`) samples; returns it.

    >>> import tensormodes as tm
    >>> bool((tm.zeros(5).log_normal_() > 0).all())
    True
    """
    d = dt.NP_TO_DTYPE[input.dtype]
    if d._category != dt._FLOAT:
        raise not_implemented("log_normal_cpu", d)
    mean, std = python_scalar(mean, "log_normal_", "mean"), python_scalar(std, "log_normal_", "std")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_float_format(std)}")
    stream = rng(generator)
    return _in_memory_order(input, lambda shape: kernels.log_normal(stream, shape, d, mean, std))
