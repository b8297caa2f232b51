"""Datasets: ``Dataset``, ``IterableDataset``, ``TensorDataset``, ``ConcatDataset``,
``ChainDataset``, ``Subset`` and ``random_split``, with PyTorch's behaviour."""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ..._api import namespace as tm

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset", "Subset",
           "random_split"]


class Dataset:
    """An abstract class representing a map-style dataset: subclasses define ``__getitem__``
    (a sample for a key) and usually ``__len__``, which samplers and ``DataLoader`` use.
    A subclass may also define ``__getitems__(indices)`` returning a list of samples, to
    fetch a batch at once.

    >>> import tensormodes as tm
    >>> class Squares(tm.utils.data.Dataset):
    ...     def __getitem__(self, i): return i * i
    ...     def __len__(self): return 4
    >>> [Squares()[i] for i in range(4)], len(Squares() + Squares())
    ([0, 1, 4, 9], 8)
    """

    def __getitem__(self, index) -> Any:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """An iterable dataset: subclasses define ``__iter__``, which yields the samples.

    >>> import tensormodes as tm
    >>> class Count(tm.utils.data.IterableDataset):
    ...     def __init__(self, n): self.n = n
    ...     def __iter__(self): return iter(range(self.n))
    >>> list(Count(2) + Count(3))
    [0, 1, 0, 1, 2]
    """

    def __iter__(self) -> Iterator:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset) -> ChainDataset:
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Dataset wrapping tensors: sample ``i`` is the tuple of each tensor's ``i``-th row.

    All tensors must have the same size in their first dimension.

    >>> import tensormodes as tm
    >>> ds = tm.utils.data.TensorDataset(tm.tensor([[1., 2.], [3., 4.]]), tm.tensor([0, 1]))
    >>> ds[1], len(ds)
    ((tensor([3., 4.]), tensor(1)), 2)
    """

    def __init__(self, *tensors: tm.Tensor) -> None:
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Datasets side by side: sample ``i`` is the tuple of each positional dataset's ``i``-th
    sample, or the dict of each keyword dataset's (one form or the other, all of one length).

    >>> import tensormodes as tm
    >>> pairs = tm.utils.data.StackDataset([1, 2], "ab")
    >>> pairs[1], len(pairs), tm.utils.data.StackDataset(x=[1, 2], y="ab")[0]
    ((2, 'b'), 2, {'x': 1, 'y': 'a'})
    """

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            # PyTorch's message, its missing space included
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                             "input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = list(args) if args else list(kwargs.values())
        self._length = len(parts[0])
        if any(len(part) != self._length for part in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {key: dataset[index] for key, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices: list) -> list:
        """The samples at ``indices``, each part through its dataset's own ``__getitems__`` if it
        has one (which must give one sample per index)."""
        keyed = isinstance(self.datasets, dict)
        columns = {}
        for key, dataset in (self.datasets.items() if keyed else enumerate(self.datasets)):
            getitems = getattr(dataset, "__getitems__", None)
            if callable(getitems):
                column = getitems(indices)
                if len(column) != len(indices):
                    raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, got "
                                     f"{len(column)}")
            else:
                column = [dataset[index] for index in indices]
            columns[key] = column
        if keyed:
            return [{key: column[i] for key, column in columns.items()} for i in range(len(indices))]
        return [tuple(column[i] for column in columns.values()) for i in range(len(indices))]

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset):
    """Dataset as a concatenation of multiple map-style datasets.

    >>> import tensormodes as tm
    >>> ds = tm.utils.data.ConcatDataset([[1, 2], [3]])
    >>> len(ds), ds[2], ds[-3], ds.cumulative_sizes
    (3, 3, 1, [2, 3])
    """

    @staticmethod
    def cumsum(sequence: Sequence) -> list[int]:
        """The running totals of the datasets' lengths."""
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset):
    """Dataset chaining multiple ``IterableDataset``s, one after the other.

    >>> import tensormodes as tm
    >>> [x for x in tm.utils.data.ChainDataset([range(2), range(3)])]
    [0, 1, 0, 1, 2]
    """

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator:
        for d in self.datasets:
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """Subset of a dataset at the given indices.

    >>> import tensormodes as tm
    >>> sub = tm.utils.data.Subset([10, 11, 12, 13], [3, 1])
    >>> sub[0], sub[1], len(sub)
    (13, 11, 2)
    """

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        """The samples at ``indices``, through the dataset's own ``__getitems__`` if it has one."""
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[idx] for idx in indices])
        return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Dataset, lengths: Sequence[int | float],
                 generator: tm.Generator | None = None) -> list[Subset]:
    """Randomly split a dataset into non-overlapping new datasets of given lengths.

    If a list of fractions that sum up to 1 is given, the lengths will be computed
    automatically as ``floor(frac * len(dataset))`` for each fraction; the remaining
    items are then distributed round-robin, one to each split from the first. The
    permutation comes from ``generator`` (the default generator when None).

    >>> import tensormodes as tm
    >>> parts = tm.utils.data.random_split(range(10), [0.5, 0.3, 0.2], generator=tm.Generator().manual_seed(0))
    >>> [len(p) for p in parts], sorted(i for p in parts for i in p)  == list(range(10))
    ([5, 3, 2], True)
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths: list[int] = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(int(math.floor(len(dataset) * frac)))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = tm.randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[offset - length:offset])
            for offset, length in zip(itertools.accumulate(lengths), lengths)]
