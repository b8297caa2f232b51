"""Flattening parameters into one vector and back: ``parameters_to_vector``, ``vector_to_parameters``.

>>> import tensormodes as tm
>>> m = tm.nn.Linear(2, 1)
>>> tm.nn.utils.vector_to_parameters(tm.arange(3.), m.parameters())
>>> m.weight.tolist(), m.bias.tolist()
([[0.0, 1.0]], [2.0])
"""

from __future__ import annotations

from collections.abc import Iterable

from ..._api import namespace as tm
from ..modules.module import _typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[tm.Tensor]) -> tm.Tensor:
    """Flatten an iterable of parameters into a single vector (differentiable, in iteration order).

    >>> import tensormodes as tm
    >>> tm.nn.utils.parameters_to_vector([tm.ones(2, 2), tm.zeros(1)]).tolist()
    [1.0, 1.0, 1.0, 1.0, 0.0]
    """
    return tm.cat([param.view(-1) for param in parameters])


def vector_to_parameters(vec: tm.Tensor, parameters: Iterable[tm.Tensor]) -> None:
    """Copy slices of a vector into an iterable of parameters (each takes ``numel`` values, in order).

    >>> import tensormodes as tm
    >>> p = tm.nn.Parameter(tm.zeros(2, 2))
    >>> tm.nn.utils.vector_to_parameters(tm.tensor([1., 2., 3., 4.]), [p]); p.tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    if not isinstance(vec, tm.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    pointer = 0
    for param in parameters:
        count = param.numel()
        param.data = vec[pointer:pointer + count].view_as(param).data
        pointer += count
