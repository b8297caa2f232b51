"""Activations that draw random numbers: ``rrelu`` (the randomized leaky ReLU behind
``nn.functional.rrelu`` and ``nn.RReLU``).

In training each non-positive element gets its own slope, drawn from ``U(lower, upper)`` with
PyTorch's CPU recipe (one 53-bit double uniform per such element, in memory order), so a seed
gives PyTorch's numbers. Listed in ``RANDOM_MODULES``: fx passes never merge or fold its calls.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from ._random_math import uniform53
from .common import dtype_of, not_implemented, quiet
from .meta_rules import rule
from .pointwise_activation import _leaky_relu
from .random import Generator, rng
from .registry import Sample, Tensor, TensorSpec, op

_RRELU_TYPES = frozenset({np.dtype(np.float32), np.dtype(np.float64), dt.bfloat16._np})


def _check_rrelu(input, lower, upper, training) -> None:
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if training and input.dtype not in _RRELU_TYPES:
        raise not_implemented("rrelu_with_noise_out_cpu", dtype_of(input))


def _rrelu_meta(input, lower=0.125, upper=1 / 3, training=False, generator=None):
    _check_rrelu(input, lower, upper, training)
    if not training:  # leaky_relu's dtype checks
        _leaky_relu(np.ones((0,), input.dtype), (lower + upper) / 2)
    return MetaArray(input.shape, input.dtype), MetaArray(input.shape, input.dtype)


def _rrelu_grad(grad, noise):
    # ``noise`` holds each element's slope (1 where the input passed unchanged); it is random, not
    # a function of the input, so it needs no history even with create_graph=True.
    return grad * noise


@op(grad=_rrelu_grad, saves=("noise",), node="rrelu_with_noise", random=True, meta=rule(_rrelu_meta),
    samples=(Sample((TensorSpec((2, 3), "float32", -3, 3),)),
             Sample((TensorSpec((2, 3), "float32", -3, 3), 0.1, 0.3, True)),
             Sample((TensorSpec((4,), "float64", -3, 3),), {"training": True}),
             Sample((TensorSpec((3,), "bfloat16", -3, 3), 0.2, 0.2)), Sample((TensorSpec((), "float32", -3, 3),)),
             Sample((TensorSpec((3,), "float16", -3, 3),)),
             Sample((TensorSpec((0, 2), "float32"),), {"training": True})),
    errors=(Sample((TensorSpec((2,), "int64"),)), Sample((TensorSpec((2,), "float16"),), {"training": True}),
            Sample((TensorSpec((2,), "float32"), 0.5, 0.1))),
    schema={"lower": "Scalar=0.125", "upper": "Scalar=0.33333333333333331", "(returns)": "Tensor"}, tags=("pointwise",))
def rrelu(input: Tensor, lower: float = 0.125, upper: float = 1 / 3, training: bool = False,
          generator: Generator | None = None) -> Tensor:
    """Randomized leaky ReLU: ``x`` where positive, else ``x * a``; in training ``a`` is drawn
    from ``U(lower, upper)`` for each element, otherwise it is ``(lower + upper) / 2``.

    >>> import tensormodes as tm
    >>> tm.rrelu(tm.tensor([-2.0, 3.0]))
    tensor([-0.4583,  3.0000])
    """
    _check_rrelu(input, lower, upper, training)
    if not training:  # PyTorch runs leaky_relu with the mean slope (its dtypes, its rounding)
        slope = (lower + upper) / 2
        result = _leaky_relu(input, slope)
        return result, np.where(input > 0, np.ones((), input.dtype), np.asarray(slope).astype(input.dtype))
    # PyTorch computes in float for bfloat16 and float32, in double for float64.
    compute = np.float64 if input.dtype == np.float64 else np.float32
    x = input.astype(compute)
    drawn = x <= 0  # NaN is not drawn for: it passes with slope 1
    low, high = float(compute(lower)), float(compute(upper))
    uniforms = uniform53(rng(generator), int(np.count_nonzero(drawn)))
    slopes = np.ones(x.shape, compute)
    slopes[drawn] = (uniforms * (high - low) + low).astype(compute)
    with quiet():
        result = np.where(drawn, x * slopes, x)
    return np.asarray(result, dtype=input.dtype), np.asarray(slopes, dtype=input.dtype)
