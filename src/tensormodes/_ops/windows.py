"""Window functions for spectral analysis: ``hann_window``, ``hamming_window``,
``blackman_window``, ``bartlett_window`` and ``kaiser_window`` — factories of a 1-D window of
``window_length`` points, ``periodic`` (the first ``window_length`` points of the symmetric window
one longer, for ``stft``) by default.

They compute as PyTorch's CPU kernels do, step by step in the window's dtype (each step of a half
type rounded, as PyTorch's in-place steps are), so float16 and bfloat16 windows are PyTorch's too.

>>> import tensormodes as tm
>>> tm.hann_window(4), tm.bartlett_window(5, periodic=False)
(tensor([0.0000, 0.5000, 1.0000, 0.5000]), tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000]))
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import _dtype as dt
from .._meta_array import MetaArray
from .common import cpp_type_name, not_implemented, resolve_dtype
from .creation import _DEFAULT_DTYPE, _is_int_like, check_device
from .meta_rules import rule
from .registry import Sample, Tensor, op


def _plan(name: str, window_length, periodic: bool, dtype, device):
    """PyTorch's checks, in its order; the target dtype and the length of the symmetric window
    computed (one more when periodic), or None for the trivial lengths 0 and 1."""
    if not _is_int_like(window_length):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    check_device(device)
    target = resolve_dtype(dtype) or _DEFAULT_DTYPE.get()[0]
    window_length = operator.index(window_length)
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if target._category not in (dt._FLOAT, dt._COMPLEX):
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={cpp_type_name(target)}, "
                           "device=cpu, layout=Strided (default), requires_grad=false (default), "
                           "pinned_memory=false, memory_format=(nullopt))")
    if target._category == dt._COMPLEX:
        raise not_implemented("arange_cpu", target)
    return target, window_length


def _meta(name: str):
    """The meta rule of window ``name``: its checks, then a 1-D result."""
    def meta(window_length, periodic=True, *args, dtype=None, layout=None, device=None, requires_grad=False):
        target, length = _plan(name, window_length, periodic, dtype, device)
        return MetaArray((length,), target._np)

    return rule(meta)


class _Steps:
    """Arithmetic in a dtype as PyTorch's kernels do it: each step in the operation type (float
    for half types, the dtype otherwise), rounded to the dtype after every step."""

    def __init__(self, target: dt.dtype) -> None:
        self.dtype = target._np
        self.work = np.float64 if target == dt.float64 else np.float32

    def __call__(self, values) -> np.ndarray:
        return np.asarray(values, self.work).astype(self.dtype).astype(self.work)

    def scalar(self, value: float):
        return self(value)  # a Scalar argument is cast to the tensor's dtype first


def _window(name: str, window_length, periodic: bool, dtype, device, values) -> np.ndarray:
    """PyTorch's checks, the trivial lengths 0 and 1 (empty, and a single 1), else
    ``values(n, step)`` over the symmetric length ``n`` (one more when periodic), cut to the
    window's length."""
    target, length = _plan(name, window_length, periodic, dtype, device)
    if length <= 1:
        return np.ones(length, target._np)
    n = length + 1 if periodic else length
    return values(n, _Steps(target))[:length].astype(target._np)


_SAMPLES = (Sample((5,)), Sample((6, False)), Sample((1,)), Sample((0,)), Sample((7,), {"dtype": dt.float64}),
            Sample((4,), {"dtype": dt.float16}), Sample((9, False), {"dtype": dt.bfloat16}))
_ERRORS = (Sample((-1,)), Sample((3,), {"dtype": dt.int64}), Sample((3,), {"dtype": dt.complex64}))


def _hamming(name: str, length: int, periodic: bool, alpha: float, beta: float, dtype, device) -> np.ndarray:
    def values(n: int, step: _Steps) -> np.ndarray:
        angle = step(np.arange(n) * step.scalar(2.0 * math.pi / (n - 1)))
        return step(step(step(np.cos(angle)) * step.scalar(-beta)) + step.scalar(alpha))

    return _window(name, length, periodic, dtype, device, values)


@op(factory=True, meta=_meta("hamming_window"), errors=_ERRORS,
    samples=(*_SAMPLES, Sample((5, True, 0.3)), Sample((6, False, 0.3, 0.2))),
    aten={"hamming_window.default": ("periodic", "alpha", "beta"),
          "hamming_window.periodic": ("alpha", "beta", "periodic: bool="),
          "hamming_window.periodic_alpha": ("beta", "periodic: bool=", "alpha: float="),
          "hamming_window.periodic_alpha_beta": ("periodic: bool=", "alpha: float=", "beta: float=")})
def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype: dt.dtype | None = None, layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """The Hamming window ``alpha - beta * cos(2 pi n / (N - 1))`` of ``window_length`` points
    (``N = window_length + 1`` when ``periodic``, the last point dropped).

    >>> import tensormodes as tm
    >>> tm.hamming_window(3, periodic=False)
    tensor([0.0800, 1.0000, 0.0800])
    """
    return _hamming("hamming_window", window_length, periodic, alpha, beta, dtype, device)


@op(factory=True, meta=_meta("hann_window"), samples=_SAMPLES, errors=_ERRORS,
    aten={"hann_window.default": ("periodic",), "hann_window.periodic": ("periodic: bool=",)})
def hann_window(window_length: int, periodic: bool = True, *, dtype: dt.dtype | None = None, layout=None,
                device=None, requires_grad: bool = False) -> Tensor:
    """The Hann window ``0.5 - 0.5 * cos(2 pi n / (N - 1))`` of ``window_length`` points
    (``N = window_length + 1`` when ``periodic``, the last point dropped): ``hamming_window``
    with ``alpha = beta = 0.5``.

    >>> import tensormodes as tm
    >>> tm.hann_window(3, periodic=False)
    tensor([0., 1., 0.])
    """
    return _hamming("hann_window", window_length, periodic, 0.5, 0.5, dtype, device)


@op(factory=True, meta=_meta("blackman_window"), samples=_SAMPLES, errors=_ERRORS,
    aten={"blackman_window.default": ("periodic",), "blackman_window.periodic": ("periodic: bool=",)})
def blackman_window(window_length: int, periodic: bool = True, *, dtype: dt.dtype | None = None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:
    """The Blackman window ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))`` of
    ``window_length`` points (``N = window_length + 1`` when ``periodic``, the last point dropped).

    >>> import tensormodes as tm
    >>> tm.blackman_window(3, periodic=False)  # the ends are 0 up to float32 rounding, as PyTorch's
    tensor([-2.9802e-08,  1.0000e+00, -2.9802e-08])
    """
    def values(n: int, step: _Steps) -> np.ndarray:
        angle = step(np.arange(n) * step.scalar(math.pi / (n - 1)))
        fourfold = step(step(np.cos(step(angle * step.scalar(4)))) * step.scalar(0.08))
        twofold = step(step(np.cos(step(angle * step.scalar(2)))) * step.scalar(0.5))
        return step(step(fourfold - twofold) + step.scalar(0.42))

    return _window("blackman_window", window_length, periodic, dtype, device, values)


@op(factory=True, meta=_meta("bartlett_window"), samples=_SAMPLES, errors=_ERRORS,
    aten={"bartlett_window.default": ("periodic",), "bartlett_window.periodic": ("periodic: bool=",)})
def bartlett_window(window_length: int, periodic: bool = True, *, dtype: dt.dtype | None = None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:
    """The Bartlett (triangular) window ``1 - |2 n / (N - 1) - 1|`` of ``window_length`` points
    (``N = window_length + 1`` when ``periodic``, the last point dropped).

    >>> import tensormodes as tm
    >>> tm.bartlett_window(5, periodic=False)
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    def values(n: int, step: _Steps) -> np.ndarray:
        window = step(np.arange(n) * step.scalar(2.0 / (n - 1)))
        first_half = ((n - 1) >> 1) + 1
        window[first_half:] = step(step(-window[first_half:]) + step.scalar(2))
        return window

    return _window("bartlett_window", window_length, periodic, dtype, device, values)


@op(factory=True, meta=_meta("kaiser_window"), samples=(*_SAMPLES, Sample((6, True, 5.0)), Sample((7, False, 0.5))),
    errors=_ERRORS, aten={"kaiser_window.default": ("periodic", "beta"),
                          "kaiser_window.periodic": ("beta", "periodic: bool="),
                          "kaiser_window.beta": ("periodic: bool=", "beta: float=")})
def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype: dt.dtype | None = None,
                  layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """The Kaiser window ``I0(beta sqrt(1 - ((n - A) / A)^2)) / I0(beta)``, ``A = (N - 1) / 2``,
    of ``window_length`` points (``N = window_length + 1`` when ``periodic``, the last point
    dropped); ``I0`` is the modified Bessel function of order zero.

    >>> import tensormodes as tm
    >>> tm.kaiser_window(3, periodic=False, beta=0.0)
    tensor([1., 1., 1.])
    """
    def values(n: int, step: _Steps) -> np.ndarray:
        middle = (n - 1) / 2.0
        # one kernel: the whole expression in the operation type, rounded once
        position = (step(np.arange(n)).astype(np.float64) - middle) / middle
        return step(np.i0(beta * np.sqrt(np.abs(1 - position ** 2))) / np.i0(beta))

    return _window("kaiser_window", window_length, periodic, dtype, device, values)
