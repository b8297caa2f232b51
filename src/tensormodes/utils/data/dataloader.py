"""``DataLoader``, and the collate functions that turn lists of samples into batches.

Data is loaded in the main process: ``num_workers > 0`` raises ``ValueError``. Batching a
``TensorDataset`` with the default collate function indexes each tensor once with the
whole batch of indices (the result equals stacking the samples, which PyTorch does).
"""

from __future__ import annotations

import collections.abc
import copy
import math
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from ..._api import namespace as tm
from .dataset import Dataset, IterableDataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "collate", "default_collate_fn_map",
           "get_worker_info"]

_STRING_OR_OBJECT = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")


def get_worker_info() -> None:
    """Information about the current data-loading worker: always None, as data is
    loaded in the main process.

    >>> import tensormodes as tm
    >>> tm.utils.data.get_worker_info() is None
    True
    """
    return None


# -- collation -----------------------------------------------------------------------------------

def collate(batch: list, *, collate_fn_map: dict | None = None) -> Any:
    """General collate function that handles the collection type of the elements of a batch.

    ``collate_fn_map`` maps an element type (or a tuple of types) to the function that
    collates a batch of such elements (called as ``fn(batch, collate_fn_map=...)``); an
    element whose exact type is not a key goes to the first key it is an instance of.
    Mappings, named tuples and sequences are collated element-wise, recursively.

    >>> import tensormodes as tm
    >>> from tensormodes.utils.data import collate, default_collate_fn_map
    >>> collate([(1, "a"), (2, "b")], collate_fn_map=default_collate_fn_map)
    [tensor([1, 2]), ('a', 'b')]
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        values = {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                # A mapping type may carry more than its items: update a copy of the first.
                clone = copy.copy(elem)
                clone.update(values)
                return clone
            return elem_type(values)
        except TypeError:
            return values
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = [collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return transposed  # a list, as in PyTorch
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = samples
                return clone
            return elem_type(transposed)
        except TypeError:
            return transposed
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch: list, *, collate_fn_map: dict | None = None) -> tm.Tensor:
    """Stacks a batch of tensors along a new first dimension."""
    return tm.stack(batch, 0)


def collate_numpy_array_fn(batch: list, *, collate_fn_map: dict | None = None) -> Any:
    """Collates NumPy arrays as tensors; arrays of strings or objects raise ``TypeError``."""
    elem = batch[0]
    if _STRING_OR_OBJECT.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([tm.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: list, *, collate_fn_map: dict | None = None) -> tm.Tensor:
    """NumPy scalars become a tensor of their own dtype."""
    return tm.as_tensor(np.asarray(batch))


def collate_float_fn(batch: list, *, collate_fn_map: dict | None = None) -> tm.Tensor:
    """Python floats become a float64 tensor."""
    return tm.tensor(batch, dtype=tm.float64)


def collate_int_fn(batch: list, *, collate_fn_map: dict | None = None) -> tm.Tensor:
    """Python ints become an int64 tensor (bools a bool tensor)."""
    return tm.tensor(batch)


def collate_str_fn(batch: list, *, collate_fn_map: dict | None = None) -> list:
    """Strings and bytes are left as a list."""
    return batch


default_collate_fn_map: dict = {
    tm.Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: list) -> Any:
    """Take in a batch of data and put the elements within the batch into a tensor with
    an additional outer dimension - batch size.

    Tensors are stacked; NumPy arrays and scalars become tensors of their dtype; Python
    floats a float64 tensor, ints an int64 tensor; strings and bytes stay a list;
    mappings, named tuples and sequences are collated element by element (a tuple
    gives a list, as in PyTorch).

    >>> import tensormodes as tm
    >>> default_collate = tm.utils.data.default_collate
    >>> default_collate([0, 1, 2])
    tensor([0, 1, 2])
    >>> default_collate([{"A": 0, "B": 1.5}, {"A": 100, "B": 2.5}])
    {'A': tensor([  0, 100]), 'B': tensor([1.5000, 2.5000], dtype=tensormodes.float64)}
    >>> default_collate([(0, 1), (2, 3)])
    [tensor([0, 2]), tensor([1, 3])]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)


def default_convert(data: Any) -> Any:
    """Convert each NumPy array element into a tensor, leaving everything else unchanged.

    Mappings, named tuples and sequences are converted element by element. It is the
    collate function of a ``DataLoader`` that does not batch (``batch_size=None``).

    >>> import numpy as np
    >>> import tensormodes as tm
    >>> tm.utils.data.default_convert({"x": np.array([0, 1]), "y": 2})
    {'x': tensor([0, 1]), 'y': 2}
    """
    elem_type = type(data)
    if isinstance(data, tm.Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and _STRING_OR_OBJECT.search(data.dtype.str) is not None:
            return data
        return tm.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        values = {key: default_convert(data[key]) for key in data}
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update(values)
                return clone
            return elem_type(values)
        except TypeError:
            return values
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        converted = [default_convert(d) for d in data]
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(converted):
                    clone[i] = d
                return clone
            return elem_type(converted)
        except TypeError:
            return converted
    return data


# -- the loader ----------------------------------------------------------------------------------

class _InfiniteConstantSampler(Sampler):
    """Yields None forever: the sampler of an ``IterableDataset``, which picks its own samples."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class DataLoader:
    """Combines a dataset and a sampler, and provides an iterable over the given dataset.

    Supports map-style and iterable-style datasets, automatic batching (``batch_size``,
    ``drop_last``, or a ``batch_sampler``), custom ``sampler`` and ``collate_fn``, and
    shuffling (``shuffle=True`` draws a fresh order each epoch from ``generator``, or from
    a seed drawn from the default generator when None, so ``tm.manual_seed`` makes runs
    reproducible). Data is loaded in the main process: ``num_workers`` must be 0
    (``ValueError`` otherwise); ``pin_memory``, ``timeout``, ``worker_init_fn``,
    ``multiprocessing_context``, ``pin_memory_device`` and ``in_order`` are accepted for
    PyTorch's signature and have no effect.

    >>> import tensormodes as tm
    >>> ds = tm.utils.data.TensorDataset(tm.arange(5.), tm.arange(5))
    >>> [y.tolist() for x, y in tm.utils.data.DataLoader(ds, batch_size=2)]
    [[0, 1], [2, 3], [4]]
    >>> loader = tm.utils.data.DataLoader(ds, batch_size=2, shuffle=True, drop_last=True,
    ...                                   generator=tm.Generator().manual_seed(0))
    >>> len(loader), sorted(len(x) for x, _ in loader)
    (2, [2, 2])
    """

    def __init__(self, dataset: Dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | Iterable | None = None, batch_sampler: Sampler | Iterable | None = None,
                 num_workers: int = 0, collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Callable | None = None,
                 multiprocessing_context=None, generator: tm.Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if num_workers > 0:
            raise ValueError(f"num_workers={num_workers} is not supported: tensormodes loads data in the main "
                             "process; use num_workers=0")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if persistent_workers:
            raise ValueError("persistent_workers option needs num_workers > 0")

        if isinstance(dataset, IterableDataset):
            if isinstance(shuffle, bool) and shuffle:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle option, "
                                 f"but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler option, "
                                 f"but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is None:
            if isinstance(dataset, IterableDataset):
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        self.collate_fn = collate_fn
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self._initialized = True

    def __setattr__(self, attr: str, value) -> None:
        if attr in _FROZEN and self.__dict__.get("_initialized"):
            raise ValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(attr, value)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            length = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def __iter__(self) -> _SingleProcessDataLoaderIter:
        return _SingleProcessDataLoaderIter(self)


class _SingleProcessDataLoaderIter:
    """One pass over a ``DataLoader``, loading in the calling process."""

    def __init__(self, loader: DataLoader) -> None:
        self._loader = loader
        self._batches = self._generate()
        # PyTorch draws the workers' base seed at each pass, from the loader's generator
        # (the default one when None), even without workers: the streams stay in step.
        self._base_seed = int(tm.empty((), dtype=tm.int64).random_(generator=loader.generator).item())

    def __iter__(self) -> _SingleProcessDataLoaderIter:
        return self

    def __next__(self):
        return next(self._batches)

    def __len__(self) -> int:
        return len(self._loader)

    def _generate(self) -> Iterator:
        loader = self._loader
        dataset, collate_fn = loader.dataset, loader.collate_fn
        if isinstance(dataset, IterableDataset):
            yield from self._iterable(dataset, collate_fn)
            return
        if not loader._auto_collation:
            for index in loader.sampler:
                yield collate_fn(dataset[index])
            return
        batch_sampler = loader.batch_sampler
        if type(dataset) is TensorDataset and collate_fn is default_collate:
            # Stacking the rows of a batch equals indexing each tensor with the batch's indices.
            tensors = dataset.tensors
            index_batches = batch_sampler._index_batches() if type(batch_sampler) is BatchSampler else None
            if index_batches is None:
                index_batches = (tm.as_tensor(indices, dtype=tm.int64) for indices in batch_sampler)
            for indices in index_batches:
                yield [t[indices] for t in tensors]
            return
        getitems = getattr(dataset, "__getitems__", None)
        for indices in batch_sampler:
            if getitems:
                yield collate_fn(getitems(indices))
            else:
                yield collate_fn([dataset[i] for i in indices])

    def _iterable(self, dataset: IterableDataset, collate_fn: Callable) -> Iterator:
        samples = iter(dataset)
        loader = self._loader
        if not loader._auto_collation:
            for sample in samples:
                yield collate_fn(sample)
            return
        for indices in loader.batch_sampler:
            data = []
            for _ in indices:
                try:
                    data.append(next(samples))
                except StopIteration:
                    break
            if not data or (loader.drop_last and len(data) < len(indices)):
                return
            yield collate_fn(data)
