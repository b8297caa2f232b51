"""Random sampling: ``Generator``, the default generator and the random factories.

The default generator is process-wide, as in PyTorch (``manual_seed`` reseeds
it for every thread). Streams differ from PyTorch's: seeds reproduce results
within tensormodes, not across libraries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import _dtype as dt
from ._common import resolve_dtype
from ._registry import Sample, op
from .creation import check_device, parse_size

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed"]


class Generator:
    """A source of random numbers with its own seed and state.

    >>> import tensormodes as tm
    >>> g = tm.Generator().manual_seed(0)
    >>> a = tm.rand(2, generator=g); _ = g.manual_seed(0)
    >>> bool((a == tm.rand(2, generator=g)).all())
    True
    """

    def __init__(self, device="cpu") -> None:
        self.device = device
        self._initial_seed = 67280421310721
        self._rng = np.random.Generator(np.random.PCG64(self._initial_seed))

    def manual_seed(self, seed: int) -> Generator:
        """Reseed and return the generator."""
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"manual_seed expected an int, got {type(seed).__name__}")
        self._initial_seed = seed
        self._rng = np.random.Generator(np.random.PCG64(seed & 0xFFFF_FFFF_FFFF_FFFF))
        return self

    def seed(self) -> int:
        """Reseed from the operating system's entropy and return the new seed."""
        new_seed = int(np.random.SeedSequence().entropy) & 0xFFFF_FFFF_FFFF_FFFF
        self.manual_seed(new_seed)
        return new_seed

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with."""
        return self._initial_seed

    def get_state(self) -> dict:
        """A copy of the generator's state (restore it with ``set_state``)."""
        return dict(self._rng.bit_generator.state)

    def set_state(self, new_state: dict) -> Generator:
        """Restore a state returned by ``get_state``."""
        self._rng.bit_generator.state = new_state
        return self


default_generator = Generator()


def rng(generator: Generator | None) -> np.random.Generator:
    """The NumPy generator behind ``generator`` (the default one for None)."""
    if generator is None:
        return default_generator._rng
    if not isinstance(generator, Generator):
        raise TypeError(f"argument 'generator' must be tensormodes.Generator, not {type(generator).__name__}")
    return generator._rng


def manual_seed(seed: int) -> Generator:
    """Seed the default generator; returns it.

    >>> import tensormodes as tm
    >>> _ = tm.manual_seed(0); a = tm.randn(3)
    >>> _ = tm.manual_seed(0); bool((a == tm.randn(3)).all())
    True
    """
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Seed the default generator non-deterministically; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The default generator's current seed."""
    return default_generator.initial_seed()


def float_dtype(dtype) -> dt.dtype:
    d = resolve_dtype(dtype) or dt.get_default_dtype()
    if d._category < dt._FLOAT:
        raise RuntimeError(f"\"check_uniform_bounds\" not implemented for '{repr(d).split('.')[1]}'")
    return d


@op(factory=True, out=True, samples=(Sample((2, 3)),))
def randn(*size: int, generator: Generator | None = None, dtype: dt.dtype | None = None, layout=None,
          device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Samples from the standard normal distribution.

    >>> import tensormodes as tm
    >>> tm.randn(2, 3).shape
    tensormodes.Size([2, 3])
    """
    check_device(device)
    d = float_dtype(dtype)
    shape = parse_size(size)
    if d._category == dt._COMPLEX:
        real = rng(generator).standard_normal(shape + (2,)) * np.sqrt(0.5)
        return (real[..., 0] + 1j * real[..., 1]).astype(d._np)
    return rng(generator).standard_normal(shape).astype(d._np)
