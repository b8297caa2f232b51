"""``tensormodes.random``: PyTorch's ``torch.random`` module — the default generator's seed
and state, and ``fork_rng``.

The generator is PyTorch's CPU Mersenne Twister, so a seed gives PyTorch's numbers and
``get_rng_state()`` is PyTorch's 5,056-byte state (a state saved by PyTorch restores here).

>>> import tensormodes as tm
>>> _ = tm.random.manual_seed(0)
>>> with tm.random.fork_rng():
...     inside = tm.rand(2)
>>> bool((tm.rand(2) == inside).all())
True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ._api import namespace as tm

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "fork_rng"]


def __getattr__(name: str):
    if name == "default_generator":
        return tm.default_generator
    raise AttributeError(f"module 'tensormodes.random' has no attribute '{name}'")


def manual_seed(seed: int):
    """Sets the seed of the default generator; returns it (``tm.manual_seed``)."""
    return tm.manual_seed(seed)


def seed() -> int:
    """Seeds the default generator non-deterministically; returns the seed (``tm.seed``)."""
    return tm.seed()


def initial_seed() -> int:
    """The default generator's initial seed (``tm.initial_seed``)."""
    return tm.initial_seed()


def get_rng_state():
    """The default generator's state, a ``uint8`` tensor in PyTorch's layout (``tm.get_rng_state``)."""
    return tm.get_rng_state()


def set_rng_state(new_state) -> None:
    """Restores the default generator's state (``tm.set_rng_state``)."""
    tm.set_rng_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type=None) -> Iterator[None]:
    """Forks the RNG, so that when you return, the RNG is reset to the state that it was
    previously in (the CPU generator; there are no other devices here). ``enabled=False``
    leaves the generator alone.

    >>> import tensormodes as tm
    >>> _ = tm.manual_seed(1)
    >>> with tm.random.fork_rng():
    ...     _ = tm.randn(5)
    >>> tm.rand(1).tolist() == [0.7576315999031067]  # seed 1's first draw
    True
    """
    if device_type == "meta" or not enabled:
        yield
        return
    state = tm.get_rng_state()
    try:
        yield
    finally:
        tm.set_rng_state(state)
