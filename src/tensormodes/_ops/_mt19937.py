"""PyTorch's CPU random engine: a 32-bit Mersenne Twister and the state bytes of
``torch.get_rng_state()``.

PyTorch seeds its MT19937 with the reference ``init_genrand`` on the low 32 bits of the
seed; NumPy's ``MT19937`` runs the same recurrence, so its raw words are PyTorch's words
once its key is set from that seed. ``MTStream`` adds what PyTorch keeps beside the
engine: the full 64-bit seed, the cached second Box–Muller sample (a double, and a float
slot PyTorch saves too) and whether the engine has been drawn from since seeding (only
the state bytes can tell).
"""

from __future__ import annotations

import functools
import struct

import numpy as np

__all__ = ["MTStream", "STATE_SIZE"]

_N = 624
_MASK32 = 0xFFFF_FFFF
_MASK64 = 0xFFFF_FFFF_FFFF_FFFF

# CPUGeneratorImplState: the legacy POD (seed, left, seeded, next, 624 uint64 words, three
# doubles and an int for the old normal cache) then a float and a bool; 8-byte aligned.
_HEAD = struct.Struct("<QiiQ")
_WORDS_AT, _WORDS_END = _HEAD.size, _HEAD.size + 8 * _N
_TAIL = struct.Struct("<dddi4xf?3x")
STATE_SIZE = _WORDS_END + _TAIL.size  # 5056, PyTorch's size
_BULK = 1 << 14


@functools.lru_cache(maxsize=32)
def _seeded_key(seed32: int) -> tuple[int, ...]:
    """The 624 state words of the reference ``init_genrand(seed32)``."""
    key = [seed32]
    value = seed32
    for j in range(1, _N):
        value = (1812433253 * (value ^ (value >> 30)) + j) & _MASK32
        key.append(value)
    return tuple(key)


class MTStream:
    """A PyTorch CPU generator's state: the engine and its normal-sample caches."""

    __slots__ = ("_bits", "_integers", "fresh", "seed", "normal_double", "normal_float")

    def __init__(self, seed: int) -> None:
        self.reseed(seed)

    def reseed(self, seed: int) -> None:
        """Seed as ``CPUGeneratorImpl::set_current_seed``: the caches are cleared."""
        self.seed = seed & _MASK64
        self._set_key(np.array(_seeded_key(self.seed & _MASK32), np.uint32), _N)
        self.fresh = True
        self.normal_double = None
        self.normal_float = None

    def _set_key(self, key: np.ndarray, pos: int) -> None:
        bits = np.random.MT19937()
        bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
        self._bits = bits
        # The full-range uint32 draw of a NumPy Generator returns the raw words unchanged
        # (one word each) and is faster than ``random_raw``.
        self._integers = np.random.Generator(bits).integers

    def words(self, n: int) -> np.ndarray:
        """The next ``n`` 32-bit words (``generator->random()``), as uint32."""
        if n <= 0:
            return np.empty(0, np.uint32)
        self.fresh = False
        if n < _BULK:  # the Generator call has a fixed cost of several microseconds
            return self._bits.random_raw(n).astype(np.uint32)
        return self._integers(0, 1 << 32, size=n, dtype=np.uint32)

    def words64(self, n: int) -> np.ndarray:
        """The next ``n`` 64-bit draws (``generator->random64()``: high word first), as uint64."""
        words = self.words(2 * n)
        out = words[0::2].astype(np.uint64)  # in place from here: a third of the memory of shifting a copy
        out <<= np.uint64(32)
        out |= words[1::2]
        return out

    def numpy_generator(self) -> np.random.Generator:
        """A NumPy generator drawing from this engine (for samplers not ported from PyTorch)."""
        self.fresh = False
        return np.random.Generator(self._bits)

    def copy(self) -> MTStream:
        """An independent stream in the same state."""
        other = MTStream.__new__(MTStream)
        state = self._bits.state["state"]
        other._set_key(state["key"].copy(), state["pos"])
        other.fresh, other.seed = self.fresh, self.seed
        other.normal_double, other.normal_float = self.normal_double, self.normal_float
        return other

    def to_bytes(self) -> bytes:
        """The state in PyTorch's ``get_rng_state()`` layout (5,056 bytes)."""
        state = self._bits.state["state"]
        pos = int(state["pos"])
        # PyTorch counts down ``left`` and up ``next``; a fresh engine has left 1, next 0.
        nxt, left = (0, 1) if self.fresh else (pos, _N + 1 - pos)
        head = _HEAD.pack(self.seed, left, 1, nxt)
        words = np.asarray(state["key"], np.uint32).astype("<u8").tobytes()
        double_valid = self.normal_double is not None
        float_valid = self.normal_float is not None
        tail = _TAIL.pack(0.0, self.normal_double if double_valid else 0.0, 0.0, int(double_valid),
                          self.normal_float if float_valid else 0.0, float_valid)
        return head + words + tail

    def load_bytes(self, data: bytes) -> None:
        """Restore a state in PyTorch's layout; a state PyTorch would refuse raises its error."""
        if len(data) != STATE_SIZE:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but found the input RNG "
                               f"state size to be {len(data)}")
        seed, left, seeded, nxt = _HEAD.unpack_from(data, 0)
        nxt &= _MASK32
        if not (seeded and 0 < left <= _N and nxt <= _N):
            raise RuntimeError("Invalid mt19937 state")
        if left != 1 and left + nxt != _N + 1:
            # PyTorch's own states always satisfy this; others would need a second counter.
            raise RuntimeError(f"Invalid mt19937 state: left={left} and next={nxt} are not a state PyTorch's "
                               "generator produces (left + next must be 625)")
        key = (np.frombuffer(data, "<u8", _N, _WORDS_AT) & np.uint64(_MASK32)).astype(np.uint32)
        _, normal_y, _, normal_valid, normal_float, float_valid = _TAIL.unpack_from(data, _WORDS_END)
        self._set_key(key, _N if left == 1 else nxt)
        self.fresh = left == 1 and nxt == 0
        self.seed = seed
        self.normal_double = normal_y if normal_valid else None
        self.normal_float = normal_float if float_valid else None
