"""``tensormodes.cov`` and ``tensormodes.corrcoef``: PyTorch's CompositeImplicitAutograd functions
(ATen's ``Correlation.cpp``), written over public ops as PyTorch computes them. Handlers of
``__torch_function__`` see ``cov`` itself; the dispatch level sees the ops it runs (``sum``, ``div``,
``mm`` ...), in PyTorch's order; gradients are those of those ops. The package face re-exports
``COMPOSITES``; ``Tensor.cov`` and ``Tensor.corrcoef`` call them.

>>> import tensormodes as tm
>>> tm.cov(tm.tensor([[1., 2., 4.], [0., 1., 1.]]))
tensor([[2.3333, 0.6667],
        [0.6667, 0.3333]])
"""

from __future__ import annotations

import warnings

from ._api import build
from ._api import namespace as tm
from ._memory_format import strided
from ._ops.common import ops, scalar_type_name
from ._ops.registry import Tensor

COMPOSITES, _public = build.native_composites("tensormodes")


def _long_scalar(value: int, like):
    """ATen's ``at::scalar_tensor(value, input.options().dtype(kLong))``: the dispatch level sees the
    options (dtype, layout, device), not the Python binding's ``pin_memory=False``."""
    return ops.ops.aten.scalar_tensor.default(value, dtype=tm.int64, layout=strided, device=like.device)


def _is_true(flag) -> bool:
    """ATen's ``is_scalar_tensor_true``: a 0-dim bool tensor compared with ``True`` by ``equal``
    (the ops PyTorch's dispatch level shows for each check of a tensor's value)."""
    return flag.equal(flag.new_ones((), dtype=tm.bool))


def _check_arguments(name: str, input) -> None:
    if not isinstance(input, tm.Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


def _check_weights(name: str, w, num_observations: int, integral: bool) -> None:
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                           f"{w.dim()} dimensions")
    kind_ok = (not w.is_floating_point() and not w.is_complex() and w.dtype != tm.bool) if integral \
        else w.is_floating_point()
    if not kind_ok:
        raise RuntimeError(f"cov(): expected {name} to have {'integral' if integral else 'floating point'} dtype "
                           f"but got {name} with {scalar_type_name(w.dtype)} dtype")
    if w.numel() != num_observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the "
                           f"input but got {w.numel()} != {num_observations}")
    if num_observations != 0 and not _is_true(w.min().ge(0)):
        raise RuntimeError(f"cov(): {name} cannot be negative")


@_public
def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """The covariance matrix of the variables in the rows of ``input`` (observations in its
    columns; a 1-D input is one variable, whose variance is returned as a 0-dim tensor).
    ``correction`` is subtracted from the number of observations (1: Bessel's correction);
    ``fweights`` (integers) repeat observations and ``aweights`` (floats) weigh them.

    >>> import tensormodes as tm
    >>> x = tm.tensor([[0., 1., 2.], [2., 1., 0.]])
    >>> tm.cov(x).tolist(), round(tm.cov(x[0], correction=0).item(), 4)
    ([[1.0, -1.0], [-1.0, 1.0]], 0.6667)
    >>> tm.cov(x, fweights=tm.tensor([1, 2, 1]), correction=0).tolist()
    [[0.5, -0.5], [-0.5, 0.5]]
    """
    _check_arguments("cov", input)
    if type(correction) is not int:
        raise TypeError(f"cov(): argument 'correction' must be int, not {type(correction).__name__}")
    for name, weights in (("fweights", fweights), ("aweights", aweights)):
        if weights is not None and not isinstance(weights, tm.Tensor):
            raise TypeError(f"cov(): argument '{name}' must be Tensor, not {type(weights).__name__}")
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    if input.dtype == tm.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    observations = input.view(1, -1) if input.dim() < 2 else input
    n = observations.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, n, integral=True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, n, integral=False)
        w = aweights if w is None else w * aweights
    w_sum = _long_scalar(n, input) if w is None else w.sum()
    if w is not None and not _is_true(w_sum.ne(0)):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    average = (observations if w is None else observations * w).sum(1) / w_sum
    if w is None:
        norm_factor = _long_scalar(n - correction, input)
    elif correction == 0:
        norm_factor = w_sum
    elif aweights is None:
        norm_factor = w_sum - correction
    elif fweights is None and n == 1 and correction == 1:
        norm_factor = _long_scalar(0, input)  # ATen's corner case (NumPy's value)
    else:
        norm_factor = w_sum - (w * aweights).sum() * correction / w_sum
    if _is_true(norm_factor.le(0)):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        norm_factor.zero_()
    if n == 1 and (fweights is None) != (aweights is None):
        # ATen's corner case: the deviation of a single weighted observation is exactly zero.
        # As in PyTorch, this zeroes the input itself (so it fails on a leaf that requires grad).
        observations.zero_()
        if not observations.is_floating_point() and not observations.is_complex():
            observations = observations.to(tm.float32)
    else:
        observations = observations - average.unsqueeze(1)
    weighted = observations if w is None else observations * w
    c = tm.mm(observations, weighted.t().conj() if weighted.is_complex() else weighted.t())
    return tm.true_divide(c, norm_factor).squeeze()


@_public
def corrcoef(input: Tensor) -> Tensor:
    """Pearson's correlation coefficients of the variables in the rows of ``input`` (``cov``
    normalised by the standard deviations, clipped to [-1, 1]); a single variable gives 1
    (or NaN where its variance is 0, NaN or infinite).

    >>> import tensormodes as tm
    >>> tm.corrcoef(tm.tensor([[1., 2., 3.], [1., 5., 3.]])).tolist()
    [[1.0, 0.5], [0.5, 1.0]]
    """
    _check_arguments("corrcoef", input)
    if input.dim() > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    c = cov(input)
    if c.dim() == 0:
        return c / c
    diagonal = c.diagonal()
    stddev = tm.sqrt(tm.real(diagonal) if diagonal.is_complex() else diagonal)
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    if c.is_complex():
        imaginary = tm.imag(c).clamp(-1, 1)  # (PyTorch's order; its C++ clip records Clamp)
        return tm.complex(tm.real(c).clamp(-1, 1), imaginary)
    return c.clamp(-1, 1)
