"""``Flatten`` and ``Unflatten``: reshape a range of dimensions.

>>> import tensormodes as tm
>>> tm.nn.Unflatten(1, (2, 5))(tm.nn.Flatten()(tm.ones(3, 2, 5))).shape
tensormodes.Size([3, 2, 5])
"""

from __future__ import annotations

from ..._api import namespace as tm
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flattens a contiguous range of dims into a tensor (by default all but the batch dimension).

    >>> import tensormodes as tm
    >>> tm.nn.Flatten(0, 1)(tm.ones(2, 3, 4)).shape
    tensormodes.Size([6, 4])
    """

    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``input.flatten(start_dim, end_dim)``."""
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        """``start_dim=..., end_dim=...``."""
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Unflattens a tensor dim expanding it to a desired shape ``unflattened_size``.

    >>> import tensormodes as tm
    >>> tm.nn.Unflatten(-1, (2, -1))(tm.ones(3, 8)).shape
    tensormodes.Size([3, 2, 4])
    """

    def __init__(self, dim: int, unflattened_size: tuple[int, ...] | list[int] | tm.Size) -> None:
        super().__init__()
        if isinstance(unflattened_size, (tuple, list)):
            for index, size in enumerate(unflattened_size):
                if not isinstance(size, int):
                    raise TypeError("unflattened_size must be tuple of ints, but found element of type "
                                    f"{type(size).__name__} at pos {index}")
        else:
            raise TypeError(f"unflattened_size must be a tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: tm.Tensor) -> tm.Tensor:
        """``input.unflatten(dim, unflattened_size)``."""
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        """``dim=..., unflattened_size=...``."""
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
