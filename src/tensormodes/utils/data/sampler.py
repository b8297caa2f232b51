"""Samplers: the orders in which a ``DataLoader`` visits a dataset's indices.

``RandomSampler`` and ``SubsetRandomSampler`` draw from ``tm.randperm`` / ``tm.randint``
with the given generator; ``RandomSampler`` without one seeds a fresh generator from
the default generator at each pass, as PyTorch does, so ``tm.manual_seed`` makes runs
reproducible — and, the streams being PyTorch's, gives PyTorch's orders: the draws are
PyTorch's too (a seed from ``random_()`` on an int64 scalar, one ``randperm`` per pass
over the data plus one more after the last index, ``randint``s with replacement in
chunks of 32), made lazily, when an index of the chunk is first needed.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Iterator, Sequence, Sized

from ..._api import namespace as tm

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]


class Sampler:
    """Base class for all samplers: subclasses define ``__iter__`` over dataset indices
    (or lists of them, for batch samplers) and, where known, ``__len__``.

    >>> import tensormodes as tm
    >>> class Evens(tm.utils.data.Sampler):
    ...     def __iter__(self): return iter(range(0, 6, 2))
    >>> list(Evens())
    [0, 2, 4]
    """

    def __iter__(self) -> Iterator:
        raise NotImplementedError


def _seeded_generator(generator: tm.Generator | None) -> tm.Generator:
    if generator is not None:
        return generator
    seed = int(tm.empty((), dtype=tm.int64).random_().item())
    return tm.Generator().manual_seed(seed)


class SequentialSampler(Sampler):
    """Samples elements sequentially, always in the same order.

    >>> import tensormodes as tm
    >>> list(tm.utils.data.SequentialSampler("abc"))
    [0, 1, 2]
    """

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """Samples elements randomly. If without replacement, then sample from a shuffled
    dataset; if with replacement, then user can specify ``num_samples`` to draw.

    >>> import tensormodes as tm
    >>> sampler = tm.utils.data.RandomSampler(range(5), generator=tm.Generator().manual_seed(0))
    >>> sorted(sampler)
    [0, 1, 2, 3, 4]
    """

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: int | None = None,
                 generator: tm.Generator | None = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or isinstance(self.num_samples, bool) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        """How many indices a pass yields (the dataset's length unless given)."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        # PyTorch's unit of drawing: a chunk of 32 randints, or one randperm per pass.
        stream = _RandomOrder(self)
        while True:
            chunk = stream.take(stream.unit)
            if chunk.shape[0] == 0:
                return
            yield from chunk.tolist()

    def __len__(self) -> int:
        return self.num_samples


class _RandomOrder:
    """A ``RandomSampler`` pass drawn lazily, as PyTorch's generator draws it: with
    replacement, ``randint``s in chunks of 32 then one of ``num_samples % 32``; without,
    one ``randperm(n)`` per pass over the data, then one more sliced to
    ``num_samples % n`` (drawn even when the slice is empty). A chunk is drawn when its
    first index is needed, so the generator is where PyTorch's is between batches, and
    ``num_samples=10**10`` costs no memory. The generator (a fresh one seeded from the
    default generator when the sampler has none) is made at the first draw, as in
    PyTorch, whose ``__iter__`` is a generator function."""

    def __init__(self, sampler: RandomSampler) -> None:
        self.n = len(sampler.data_source)
        self.replacement = sampler.replacement
        self.unit = 32 if sampler.replacement else self.n
        self.full_units, self.rest = divmod(sampler.num_samples, self.unit)
        self.sampler_generator = sampler.generator
        self.generator: tm.Generator | None = None
        self.buffer = tm.empty(0, dtype=tm.int64)
        self.tail_drawn = False

    def _draw(self, units: int) -> tm.Tensor:
        if self.replacement:  # one randint of k chunks draws what k randints of 32 draw
            return tm.randint(high=self.n, size=(units * 32,), dtype=tm.int64, generator=self.generator)
        perms = [tm.randperm(self.n, generator=self.generator) for _ in range(units)]
        return perms[0] if units == 1 else tm.cat(perms)

    def _draw_tail(self) -> tm.Tensor:
        if self.replacement:
            return tm.randint(high=self.n, size=(self.rest,), dtype=tm.int64, generator=self.generator)
        return tm.randperm(self.n, generator=self.generator)[:self.rest]

    def take(self, count: int) -> tm.Tensor:
        """The next ``count`` indices (fewer at the end of the pass; none after it)."""
        if self.generator is None:
            self.generator = _seeded_generator(self.sampler_generator)
        parts = [self.buffer] if self.buffer.shape[0] else []
        have = self.buffer.shape[0]
        while have < count:
            missing = count - have
            if self.full_units:
                units = min(self.full_units, -(-missing // self.unit))
                self.full_units -= units
                drawn = self._draw(units)
            elif not self.tail_drawn:
                self.tail_drawn = True
                drawn = self._draw_tail()
            else:
                break
            parts.append(drawn)
            have += drawn.shape[0]
        if not parts:
            return self.buffer
        joined = parts[0] if len(parts) == 1 else tm.cat(parts)
        self.buffer = joined[count:]
        return joined[:count]


class SubsetRandomSampler(Sampler):
    """Samples elements randomly from a given list of indices, without replacement.

    >>> import tensormodes as tm
    >>> sorted(tm.utils.data.SubsetRandomSampler([7, 3, 5]))
    [3, 5, 7]
    """

    def __init__(self, indices: Sequence[int], generator: tm.Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in tm.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """Samples elements from ``[0, .., len(weights)-1]`` with given probabilities (weights).

    >>> import tensormodes as tm
    >>> sampler = tm.utils.data.WeightedRandomSampler([0., 1., 0.], 3)
    >>> list(sampler)
    [1, 1, 1]
    """

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: tm.Generator | None = None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights_tensor = tm.as_tensor(weights, dtype=tm.double)
        if len(weights_tensor.shape) != 1:
            raise ValueError("weights should be a 1d sequence but given "
                             f"weights have shape {tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        # a generator function, as PyTorch's: the draw happens at the first index
        rand_tensor = tm.multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        yield from rand_tensor.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Wraps another sampler to yield a mini-batch of indices.

    >>> import tensormodes as tm
    >>> list(tm.utils.data.BatchSampler(tm.utils.data.SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler: Sampler | Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, numbers.Integral) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size

    def _index_batches(self) -> Iterator[tm.Tensor] | None:
        """The batches as index tensors, when the sampler can give its order in slices
        (the loader then indexes a ``TensorDataset`` without a Python loop per sample)."""
        if type(self.sampler) is SequentialSampler:
            return self._split(_SequentialOrder(len(self.sampler.data_source)))
        if type(self.sampler) is RandomSampler:
            return self._split(_RandomOrder(self.sampler))
        return None

    def _split(self, stream: _SequentialOrder | _RandomOrder) -> Iterator[tm.Tensor]:
        while True:
            batch = stream.take(self.batch_size)
            if batch.shape[0] < self.batch_size:  # the sampler ran out before this batch was full
                if batch.shape[0] and not self.drop_last:
                    yield batch
                return
            yield batch


class _SequentialOrder:
    """``range(n)`` handed out in slices, like ``_RandomOrder``."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.start = 0

    def take(self, count: int) -> tm.Tensor:
        """The next ``count`` indices (fewer at the end)."""
        stop = min(self.start + count, self.n)
        batch = tm.arange(self.start, stop, dtype=tm.int64)
        self.start = stop
        return batch
