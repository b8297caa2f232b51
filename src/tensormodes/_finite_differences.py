"""``tensormodes.gradient``: PyTorch's CompositeImplicitAutograd function (ATen's ``ReduceOps.cpp``),
the derivative of a sampled function by second-order central differences inside and first- or
second-order one-sided differences at the edges, written with the ATen ops PyTorch's C++ runs in
the order it runs them (C++ evaluates a binary operator's right operand first): the dispatch level
sees the same ``slice`` / ``sub`` / ``div.Scalar`` / ``cat`` calls, and gradients are those ops'.
Handlers of ``__torch_function__`` see ``gradient`` itself. The package face re-exports
``COMPOSITES``.

>>> import tensormodes as tm
>>> tm.gradient(tm.tensor([1., 2., 4., 8.]))
(tensor([1.0000, 1.5000, 3.0000, 4.0000]),)
"""

from __future__ import annotations

import numbers

from ._api import build
from ._api import namespace as tm
from ._ops.common import ops, wrap_dim
from ._ops.registry import Tensor

COMPOSITES, _public = build.native_composites("tensormodes")


def _is_tensor_list(spacing) -> bool:
    return isinstance(spacing, (list, tuple)) and len(spacing) > 0 and isinstance(spacing[0], tm.Tensor)


def _scalar(value):
    """A spacing as PyTorch's binding reads a Scalar (a 0-dim tensor's value)."""
    return value.item() if isinstance(value, tm.Tensor) else value


def _check(input: Tensor, spacing_size: int | None, dims: list[int] | None, edge_order: int) -> None:
    """ATen's ``pre_check_gradient``, in its order."""
    if input.dtype is tm.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if spacing_size is not None and dims is None and spacing_size != input.dim():
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal to "
                           f"'self.dim() = {input.dim()}', since dim argument was not given, but got a list of length "
                           f"{spacing_size}")
    if spacing_size is not None and dims is not None and spacing_size != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length {spacing_size} "
                           f"and a dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dims is not None:
        seen = set()
        for dim in dims:
            wrapped = wrap_dim(dim, input.dim())
            if wrapped in seen:
                raise RuntimeError(f"dim {wrapped} appears multiple times in the list of dims")
            seen.add(wrapped)
    for dim in (range(input.dim()) if dims is None else dims):
        if input.shape[dim] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")


def _uniform(input: Tensor, spacing: list, dims: list[int], edge_order: int) -> tuple[Tensor, ...]:
    """ATen's ``gradient_helper_float``: samples ``spacing[i]`` apart along ``dims[i]``."""
    aten = ops.ops.aten
    result = []
    for dim, step in zip(dims, spacing):
        d = wrap_dim(dim, input.dim())
        before, after = aten.slice.Tensor(input, d, 0, -2), aten.slice.Tensor(input, d, 2)
        center = aten.div.Scalar(aten.sub.Tensor(after, before), step)
        if edge_order == 1:
            first, second = aten.slice.Tensor(input, d, 0, 1), aten.slice.Tensor(input, d, 1, 2)
            prepend = aten.div.Scalar(aten.sub.Tensor(second, first), step)
            last_but_one, last = aten.slice.Tensor(input, d, -2, -1), aten.slice.Tensor(input, d, -1)
            append = aten.div.Scalar(aten.sub.Tensor(last, last_but_one), step)
        else:
            third = aten.mul.Scalar(aten.slice.Tensor(input, d, 2, 3), 0.5)
            second = aten.mul.Scalar(aten.slice.Tensor(input, d, 1, 2), 2)
            first = aten.mul.Scalar(aten.slice.Tensor(input, d, 0, 1), -1.5)
            prepend = aten.div.Scalar(aten.sub.Tensor(aten.add.Tensor(first, second), third), step)
            last = aten.mul.Scalar(aten.slice.Tensor(input, d, -1), 1.5)
            last_but_one = aten.mul.Scalar(aten.slice.Tensor(input, d, -2, -1), 2)
            last_but_two = aten.mul.Scalar(aten.slice.Tensor(input, d, -3, -2), 0.5)
            append = aten.div.Scalar(aten.add.Tensor(aten.sub.Tensor(last_but_two, last_but_one), last), step)
        result.append(_joined(prepend, aten.div.Scalar(center, 2), append, d))
    return tuple(result)


def _joined(prepend: Tensor, center: Tensor, append: Tensor, dim: int) -> Tensor:
    # ATen's prepend_append_on_dim: one cat (its dim left out at 0, as PyTorch's call)
    aten = ops.ops.aten
    return aten.cat.default([prepend, center, append], dim) if dim else aten.cat.default([prepend, center, append])


def _coordinates(input: Tensor, coordinates, dims: list[int], edge_order: int) -> tuple[Tensor, ...]:
    """ATen's ``gradient_helper``: samples at the 1-D ``coordinates[i]`` along ``dims[i]``."""
    aten = ops.ops.aten
    result = []
    for dim, points in zip(dims, coordinates):
        if points.dim() != 1:
            raise RuntimeError(f"torch.gradient expected each element of spacing to have one dimension, but got an "
                               f"element with {points.dim()} dimensions!")
        d = wrap_dim(dim, input.dim())
        shape = [1] * input.dim()
        shape[d] = -1
        length = points.shape[0] - 1  # (diff: narrow(1, n - 1) - narrow(0, n - 1))
        start = aten.slice.Tensor(points, 0, 0, length)
        steps = aten.sub.Tensor(aten.slice.Tensor(points, 0, 1, 1 + length), start)
        dx1, dx2 = aten.slice.Tensor(steps, 0, 0, -1), aten.slice.Tensor(steps, 0, 1)
        # a = -dx2 / (dx1 * (dx1 + dx2)), b = (dx2 - dx1) / (dx1 * dx2), c = dx1 / (dx2 * (dx1 + dx2))
        a = aten.mul.Tensor(dx1, aten.add.Tensor(dx1, dx2))
        a = aten.view.default(aten.div.Tensor(aten.neg.default(dx2), a), shape)
        b = aten.mul.Tensor(dx1, dx2)
        b = aten.view.default(aten.div.Tensor(aten.sub.Tensor(dx2, dx1), b), shape)
        c = aten.mul.Tensor(dx2, aten.add.Tensor(dx1, dx2))
        c = aten.view.default(aten.div.Tensor(dx1, c), shape)
        center = _combined(input, d, (a, b, c), ((0, -2), (1, -1), (2, None)))
        if edge_order == 1:
            step = aten.select.int(steps, 0, 0)
            head = aten.slice.Tensor(input, d, 0, 1)
            prepend = aten.div.Tensor(aten.sub.Tensor(aten.slice.Tensor(input, d, 1, 2), head), step)
            step = aten.select.int(steps, 0, -1)
            previous = aten.slice.Tensor(input, d, -2, -1)
            append = aten.div.Tensor(aten.sub.Tensor(aten.slice.Tensor(input, d, -1), previous), step)
        else:
            prepend = _combined(input, d, _first_weights(steps), ((0, 1), (1, 2), (2, 3)))
            append = _combined(input, d, _last_weights(steps), ((-3, -2), (-2, -1), (-1, None)))
        result.append(_joined(prepend, center, append, d))
    return tuple(result)


def _combined(input: Tensor, dim: int, weights, windows) -> Tensor:
    """``a * input[w0] + b * input[w1] + c * input[w2]`` along ``dim``, the last product first."""
    aten = ops.ops.aten
    products = []
    for weight, (start, end) in zip(reversed(weights), reversed(windows)):
        window = aten.slice.Tensor(input, dim, start) if end is None else aten.slice.Tensor(input, dim, start, end)
        products.append(aten.mul.Tensor(weight, window))
    third, second, first = products
    return aten.add.Tensor(aten.add.Tensor(first, second), third)


def _first_weights(steps: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """The second-order one-sided weights at the first sample (steps s0, s1):
    ``-(2 s0 + s1) / (s0 (s0 + s1))``, ``(s0 + s1) / (s0 s1)``, ``-s0 / (s1 (s0 + s1))``."""
    aten = ops.ops.aten

    def step(i):
        return aten.select.int(steps, 0, i)

    s1, s0 = step(1), step(0)
    total = aten.add.Tensor(s0, s1)
    denominator = aten.mul.Tensor(step(0), total)
    s1, s0 = step(1), step(0)
    a = aten.div.Tensor(aten.neg.default(aten.add.Tensor(aten.mul.Scalar(s0, 2.0), s1)), denominator)
    s1, s0 = step(1), step(0)
    denominator = aten.mul.Tensor(s0, s1)
    s1, s0 = step(1), step(0)
    b = aten.div.Tensor(aten.add.Tensor(s0, s1), denominator)
    s1, s0 = step(1), step(0)
    total = aten.add.Tensor(s0, s1)
    denominator = aten.mul.Tensor(step(1), total)
    c = aten.div.Tensor(aten.neg.default(step(0)), denominator)
    return a, b, c


def _last_weights(steps: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """The second-order one-sided weights at the last sample (steps s-2, s-1):
    ``s-1 / (s-2 (s-1 + s-2))``, ``-(s-1 + s-2) / (s-1 s-2)``, ``(2 s-1 + s-2) / (s-1 (s-1 + s-2))``."""
    aten = ops.ops.aten

    def step(i):
        return aten.select.int(steps, 0, i)

    before, last = step(-2), step(-1)
    total = aten.add.Tensor(last, before)
    denominator = aten.mul.Tensor(step(-2), total)
    a = aten.div.Tensor(step(-1), denominator)
    before, last = step(-2), step(-1)
    denominator = aten.mul.Tensor(last, before)
    before, last = step(-2), step(-1)
    b = aten.div.Tensor(aten.neg.default(aten.add.Tensor(last, before)), denominator)
    before, last = step(-2), step(-1)
    total = aten.add.Tensor(last, before)
    denominator = aten.mul.Tensor(step(-1), total)
    before, last = step(-2), step(-1)
    c = aten.div.Tensor(aten.add.Tensor(aten.mul.Scalar(last, 2), before), denominator)
    return a, b, c


@_public
def gradient(input: Tensor, *, spacing=None, dim=None, edge_order: int = 1) -> tuple[Tensor, ...]:
    """Estimates the gradient of a function sampled at ``input`` along ``dim`` (every dimension by
    default): central differences inside, one-sided ones of order ``edge_order`` (1 or 2) at the
    edges; ``spacing`` is the distance between samples (1 by default; a scalar, or one per
    dimension), or each dimension's sample coordinates (a list of 1-D tensors). One tensor per
    dimension.

    >>> import tensormodes as tm
    >>> tm.gradient(tm.tensor([[1., 2., 4.], [2., 4., 8.]]), spacing=2.0, dim=1)
    (tensor([[0.5000, 0.7500, 1.0000],
            [1.0000, 1.5000, 2.0000]]),)
    """
    dims = None if dim is None else ([dim] if isinstance(dim, numbers.Integral) else list(dim))
    every = list(range(input.dim())) if dims is None else dims
    if _is_tensor_list(spacing):
        _check(input, len(spacing), dims, edge_order)
        return _coordinates(input, list(spacing), every, edge_order)
    if isinstance(spacing, (list, tuple)):
        steps = [_scalar(s) for s in spacing]
        _check(input, len(steps), dims, edge_order)
    else:  # one step for every dimension (1.0 when not given, as PyTorch's default)
        steps = [1.0 if spacing is None else _scalar(spacing)] * len(every)
        _check(input, None if spacing is None else len(steps), dims, edge_order)
    return _uniform(input, steps, every, edge_order)
