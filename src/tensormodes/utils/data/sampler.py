"""Samplers: the orders in which a ``DataLoader`` visits a dataset's indices.

``RandomSampler`` and ``SubsetRandomSampler`` draw from ``tm.randperm`` / ``tm.randint``
with the given generator; ``RandomSampler`` without one seeds a fresh generator from
the default generator at each pass, as PyTorch does, so ``tm.manual_seed`` makes runs
reproducible — and, the streams being PyTorch's, gives PyTorch's orders: the draws are
PyTorch's too (a seed from ``random_()`` on an int64 scalar, one ``randperm`` per pass
over the data plus one more after the last index, ``randint``s with replacement).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized

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


def _nothing() -> None:
    return None


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

    def _order(self) -> tm.Tensor:
        return tm.arange(len(self.data_source))


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
        order, finish = self._order()
        yield from order.tolist()
        finish()

    def __len__(self) -> int:
        return self.num_samples

    def _order(self) -> tuple[tm.Tensor, Callable[[], None]]:
        """One pass's indices, drawn at once (the loader batches them without a Python loop),
        and what to call after the last one is used: PyTorch's sampler draws one more
        ``randperm`` then (its slice of ``num_samples % n`` indices, empty after whole passes)."""
        n = len(self.data_source)
        generator = _seeded_generator(self.generator)
        if self.replacement:  # PyTorch draws chunks of 32: the same numbers as one draw
            return tm.randint(high=n, size=(self.num_samples,), dtype=tm.int64, generator=generator), _nothing
        full, rest = divmod(self.num_samples, n)
        parts = [tm.randperm(n, generator=generator) for _ in range(full)]
        if rest:
            parts.append(tm.randperm(n, generator=generator)[:rest])
            finish = _nothing
        else:
            def finish() -> None:
                tm.randperm(n, generator=generator)
        if not parts:
            return tm.empty(0, dtype=tm.int64), finish
        return (parts[0] if len(parts) == 1 else tm.cat(parts)), finish


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
        rand_tensor = tm.multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        return iter(rand_tensor.tolist())

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
        """The batches as index tensors, when the sampler can give its whole order at once."""
        if type(self.sampler) is SequentialSampler:
            return self._split(self.sampler._order(), _nothing)
        if type(self.sampler) is RandomSampler:
            return self._split(*self.sampler._order())
        return None

    def _split(self, order: tm.Tensor, finish: Callable[[], None]) -> Iterator[tm.Tensor]:
        n = order.shape[0]
        for start in range(0, n, self.batch_size):
            batch = order[start:start + self.batch_size]
            if batch.shape[0] < self.batch_size:  # PyTorch's sampler runs out before this batch
                finish()
                if not self.drop_last:
                    yield batch
                return
            yield batch
        finish()
