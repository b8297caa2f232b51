"""``DataLoader``, and the collate functions that turn lists of samples into batches.

Data is loaded in the calling process, or in worker processes with ``num_workers > 0``
(``_worker.py`` holds what runs in them). Batching a ``TensorDataset`` with the default
collate function indexes each tensor once with the whole batch of indices (the result
equals stacking the samples, which PyTorch does).
"""

from __future__ import annotations

import collections.abc
import copy
import itertools
import math
import multiprocessing
import multiprocessing.context
import os
import queue
import re
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from ..._api import namespace as tm
from ._worker import (
    MP_STATUS_CHECK_INTERVAL,
    ExceptionWrapper,
    _IterableDatasetStopIteration,
    _IterableFetcher,
    _MapFetcher,
    _ResumeIteration,
    _worker_loop,
    get_worker_info,
)
from .dataset import Dataset, IterableDataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "collate", "default_collate_fn_map",
           "get_worker_info"]

_STRING_OR_OBJECT = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")


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
    reproducible).

    ``num_workers > 0`` loads batches in that many worker processes (``multiprocessing``,
    the platform's start method unless ``multiprocessing_context`` says otherwise), each
    with a copy of the dataset, ``prefetch_factor`` batches ahead per worker, in the
    sampler's order (``in_order=False``: as they come). Each pass draws a base seed from
    ``generator`` (or the default generator); worker ``i`` seeds ``random``, tensormodes
    and NumPy from ``base_seed + i`` as PyTorch does (``get_worker_info().seed``), then runs
    ``worker_init_fn(i)``. The batches are those of ``num_workers=0``. A worker's exception
    is re-raised in the main process ("Caught ValueError in DataLoader worker process 0.
    Original Traceback ..."). ``persistent_workers=True`` keeps the workers between passes.
    ``pin_memory`` is accepted and warns (there is no accelerator to pin for), as PyTorch
    on a CPU-only machine.

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
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.num_workers = num_workers
        self.multiprocessing_context = multiprocessing_context  # validated by the property

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
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self._iterator: _MultiProcessingDataLoaderIter | None = None  # the persistent workers' iterator
        self._initialized = True
        self.check_worker_number_rationality()

    def __setattr__(self, attr: str, value) -> None:
        if attr in _FROZEN and self.__dict__.get("_initialized"):
            raise ValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(attr, value)

    @property
    def multiprocessing_context(self):
        """The ``multiprocessing`` context the workers are started with (None: the default one);
        settable as a context or a start method's name."""
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context) -> None:
        if context is not None:
            if self.num_workers == 0:
                raise ValueError("multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                                     f"{methods!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={context}")
        self._multiprocessing_context = context

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

    def __iter__(self) -> _SingleProcessDataLoaderIter | _MultiProcessingDataLoaderIter:
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def _get_iterator(self) -> _SingleProcessDataLoaderIter | _MultiProcessingDataLoaderIter:
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def check_worker_number_rationality(self) -> None:
        """Warn when more workers are asked for than this process may use CPUs."""
        if not self.num_workers:
            return
        cpuset_checked = hasattr(os, "sched_getaffinity")
        suggested = len(os.sched_getaffinity(0)) if cpuset_checked else os.cpu_count()
        if suggested is not None and self.num_workers <= suggested:
            return
        if suggested is None:
            advice = "DataLoader is not able to compute a suggested max number of worker in current system."
        else:
            advice = (f"Our suggested max number of worker in current system is {suggested}"
                      f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}, which is smaller than "
                      "what this DataLoader is going to create.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. {advice} Please "
                      "be aware that excessive worker creation might get DataLoader running slow or even freeze, "
                      "lower the worker number to avoid potential slowness/freeze if necessary.", stacklevel=2)


# -- iterating: one pass over the loader -----------------------------------------------------------

def _tensor_rows(loader: DataLoader) -> bool:
    """True when batches can be taken as rows of a ``TensorDataset``'s tensors."""
    return loader._auto_collation and type(loader.dataset) is TensorDataset and loader.collate_fn is default_collate


def _index_iterator(loader: DataLoader) -> Iterator:
    """The pass's indices (batches of them when batching): index tensors sliced from the
    sampler's order when it can give one and the rows are fetched as tensors, else the
    index sampler's own iterator. Both draw random numbers as PyTorch's sampler does."""
    if _tensor_rows(loader) and type(loader.batch_sampler) is BatchSampler:
        batches = loader.batch_sampler._index_batches()
        if batches is not None:
            return batches
    return iter(loader._index_sampler)


def _make_fetcher(loader: DataLoader) -> _MapFetcher | _IterableFetcher:
    fetcher_type = _IterableFetcher if isinstance(loader.dataset, IterableDataset) else _MapFetcher
    return fetcher_type(loader.dataset, loader._auto_collation, loader.collate_fn, loader.drop_last,
                        _tensor_rows(loader))


def _draw_base_seed(loader: DataLoader) -> int:
    # PyTorch draws the workers' base seed at each pass, from the loader's generator
    # (the default one when None), even without workers: the streams stay in step.
    return int(tm.empty((), dtype=tm.int64).random_(generator=loader.generator).item())


def _warn_about_pinning(loader: DataLoader) -> None:
    if loader.pin_memory and loader.pin_memory_device:
        warnings.warn("pin_memory_device is deprecated, the current accelerator will be used as the device,"
                      f"ignore pin_memory_device='{loader.pin_memory_device}'.", stacklevel=3)
    if loader.pin_memory:  # there is never an accelerator here
        warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned memory "
                      "won't be used.", stacklevel=3)


class _SingleProcessDataLoaderIter:
    """One pass over a ``DataLoader``, loading in the calling process."""

    def __init__(self, loader: DataLoader) -> None:
        _warn_about_pinning(loader)
        self._loader = loader
        self._sampler_iter = _index_iterator(loader)
        self._base_seed = _draw_base_seed(loader)
        if loader.timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._fetcher = _make_fetcher(loader)

    def __iter__(self) -> _SingleProcessDataLoaderIter:
        return self

    def __next__(self):
        index = next(self._sampler_iter)
        return self._fetcher.fetch(index)  # an iterable dataset's end raises StopIteration

    def __len__(self) -> int:
        return len(self._loader)


class _MultiProcessingDataLoaderIter:
    """One pass over a ``DataLoader`` (several, with persistent workers), loading in worker
    processes: PyTorch's protocol. Task ``k`` (the ``k``-th batch of indices) goes to worker
    ``k % num_workers`` (the next live one), at most ``prefetch_factor * num_workers`` tasks
    are out at once, and results are handed out in task order (as they arrive when
    ``in_order=False``)."""

    def __init__(self, loader: DataLoader) -> None:
        _warn_about_pinning(loader)
        self._loader = loader
        self._iterable = isinstance(loader.dataset, IterableDataset)
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        self._timeout = loader.timeout
        self._persistent_workers = loader.persistent_workers
        self._sampler_iter = _index_iterator(loader)
        self._base_seed = _draw_base_seed(loader)
        if self._prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for MultiProcessingDataLoaderIter")
        context = loader.multiprocessing_context or multiprocessing.get_context()
        self._shutdown = False
        self._workers: list = []
        self._index_queues: list = []
        self._result_queue = context.Queue()
        self._workers_done_event = context.Event()
        tensor_rows = _tensor_rows(loader)
        for worker_id in range(self._num_workers):
            index_queue = context.Queue()
            index_queue.cancel_join_thread()  # exiting never waits on indices no worker will read
            worker = context.Process(target=_worker_loop, args=(
                self._iterable, loader.dataset, index_queue, self._result_queue, self._workers_done_event,
                loader._auto_collation, loader.collate_fn, loader.drop_last, self._base_seed,
                loader.worker_init_fn, worker_id, self._num_workers, tensor_rows))
            worker.daemon = True  # never outlives the main process
            worker.start()
            self._index_queues.append(index_queue)
            self._workers.append(worker)
        self._reset(loader, first_iter=True)

    def __iter__(self) -> _MultiProcessingDataLoaderIter:
        return self

    def __len__(self) -> int:
        return len(self._loader)

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        """Start a pass: a new sampler iterator (persistent workers: acknowledged resumes), then
        the first ``prefetch_factor * num_workers`` tasks."""
        if not first_iter:
            self._sampler_iter = _index_iterator(loader)
        self._send_idx = 0  # the next task to send
        self._rcvd_idx = 0  # the next task to hand out
        self._task_info: dict[int, tuple] = {}  # task -> (worker,) while out, (worker, data) when early
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for index_queue in self._index_queues:
                index_queue.put(_ResumeIteration())
            waiting = self._num_workers
            while waiting:
                task, _ = self._get_data()
                if isinstance(task, _ResumeIteration):
                    waiting -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout: float = MP_STATUS_CHECK_INTERVAL):
        try:
            return True, self._result_queue.get(timeout=timeout)
        except Exception as error:
            failed = [w for i, w in enumerate(self._workers) if self._workers_status[i] and not w.is_alive()]
            if failed:
                for i, w in enumerate(self._workers):
                    if w in failed:
                        self._mark_worker_as_unavailable(i)
                pids = ", ".join(str(w.pid) for w in failed)
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from error
            if isinstance(error, queue.Empty):
                return False, None
            raise

    def _get_data(self):
        if self._timeout > 0:
            success, data = self._try_get_data(self._timeout)
            if success:
                return data
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        while True:
            success, data = self._try_get_data()
            if success:
                return data

    def __next__(self):
        while True:
            # Skip the tasks of workers whose iterable dataset ran out.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:  # has data, or may still send it
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:  # it came early and waited
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            task, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._iterable and isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if task != self._rcvd_idx:
                if not self._in_order:
                    return self._process_data(data, self._task_info.pop(task)[0])
                self._task_info[task] += (data,)
            else:
                worker_id = self._task_info.pop(task)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _try_put_index(self) -> None:
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next live worker (with room, when out of order)
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                if self._in_order or self._workers_num_tasks[worker_id] < max_tasks // sum(self._workers_status):
                    break
        else:
            return
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._workers_num_tasks[worker_id] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_id: int):
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id: int) -> None:
        # None tells the worker to exit once it has drained its queue.
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        """Stop the workers (asked first, terminated if they do not exit in time); idempotent."""
        if self._shutdown or sys.is_finalizing():
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id)
            for worker in self._workers:
                worker.join(timeout=MP_STATUS_CHECK_INTERVAL)
            for index_queue in self._index_queues:
                index_queue.cancel_join_thread()
                index_queue.close()
        finally:
            for worker in self._workers:
                if worker.is_alive():
                    worker.terminate()
                    worker.join(timeout=MP_STATUS_CHECK_INTERVAL)

    def __del__(self) -> None:
        if self.__dict__.get("_workers"):
            self._shutdown_workers()
