"""What runs inside a ``DataLoader`` worker process, and what crosses back from it.

A worker is started with a copy of the dataset (forked, or pickled under another start
method), seeds ``random``, tensormodes and NumPy's global generator from the loader's base
seed and its id — PyTorch's seeds: ``base_seed + worker_id``, and for NumPy the same
128-bit state PyTorch derives — then fetches the batches whose indices the main process
sends, and puts back ``(task index, batch)`` pairs. Batches are pickled on the way
(tensors pickle as their NumPy arrays). An exception becomes an ``ExceptionWrapper``
that the main process re-raises with PyTorch's wording.
"""

from __future__ import annotations

import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._api import namespace as tm
from ..._runtime import set_num_threads

__all__ = ["WorkerInfo", "get_worker_info", "ExceptionWrapper"]

# How often (seconds) a waiting worker checks that its parent is alive, and the main
# process that its workers are: PyTorch's value.
MP_STATUS_CHECK_INTERVAL = 5.0
# How often an idle worker checks that the loader has not shut down and its parent lives.
_WORKER_POLL_INTERVAL = 0.1


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """Information about the current DataLoader worker process: ``id`` (0 to
    ``num_workers - 1``), ``num_workers``, ``seed`` (``base_seed + id``, the seed
    tensormodes' default generator got in this worker) and ``dataset`` (this worker's copy).
    """

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Any = None
    worker_method: str | None = "multiprocessing"


class _WorkerState:
    """This process's ``WorkerInfo``: set once in a worker process, None in the main one."""

    info: WorkerInfo | None = None


_CURRENT = _WorkerState()


def get_worker_info() -> WorkerInfo | None:
    """Returns the information about the current ``DataLoader`` iterator worker process:
    a ``WorkerInfo`` in a worker, None in the main process.

    >>> import tensormodes as tm
    >>> tm.utils.data.get_worker_info() is None
    True
    """
    return _CURRENT.info


class KeyErrorMessage(str):
    """A message that a ``KeyError`` shows as it is (``KeyError`` shows its argument's repr)."""

    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """Wraps an exception plus traceback to communicate across processes."""

    def __init__(self, exc_info=None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        # the traceback object itself would not pickle: keep its text
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Re-raises the wrapped exception, its type with the worker's traceback in the message."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        try:
            raise exception
        finally:
            # The traceback holds this frame: without the local, no cycle keeps the loader's
            # iterator (and its workers) alive until the garbage collector runs.
            del exception


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """A worker's iterable dataset is exhausted."""

    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Sent to persistent workers at a new epoch: start a new pass (acknowledged)."""

    seed: int | None = None


# -- fetching a batch ------------------------------------------------------------------------------

class _MapFetcher:
    """Fetches samples of a map-style dataset by index (a list of indices when batching)."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool, tensor_rows: bool) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        # A TensorDataset batched by default_collate: stacking the rows of a batch equals
        # indexing each tensor with the batch's indices, without a Python loop per sample.
        self.tensor_rows = tensor_rows

    def fetch(self, index):
        """The collated samples at ``index``."""
        if self.tensor_rows:
            rows = tm.as_tensor(index, dtype=tm.int64)
            return [t[rows] for t in self.dataset.tensors]
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            data = getitems(index) if getitems else [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class _IterableFetcher:
    """Fetches the next samples of an iterable dataset (raising StopIteration at its end)."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool, tensor_rows: bool) -> None:
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index):
        """As many samples as ``index`` holds, collated (one sample without batching)."""
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


# -- seeds -----------------------------------------------------------------------------------------

_MASK32 = 0xFFFFFFFF


def _numpy_seed_state(base_seed: int, worker_id: int) -> list[int]:
    """The four 32-bit words PyTorch seeds NumPy's global generator with in a worker: NumPy's
    ``SeedSequence`` hashing applied to ``[worker_id, base_seed low, base_seed high, 0]``."""
    hash_a = [0x43B0D7E5]

    def hashmix(value: int) -> int:
        value = (value ^ hash_a[0]) & _MASK32
        hash_a[0] = (hash_a[0] * 0x931E8875) & _MASK32
        value = (value * hash_a[0]) & _MASK32
        return (value ^ (value >> 16)) & _MASK32

    def mix(x: int, y: int) -> int:
        result = ((0xCA01F9DD * x) - (0x4973F715 * y)) & _MASK32
        return (result ^ (result >> 16)) & _MASK32

    pool = [hashmix(word) for word in (worker_id, base_seed & _MASK32, base_seed >> 32, 0)]
    for source in range(4):
        for target in range(4):
            if source != target:
                pool[target] = mix(pool[target], hashmix(pool[source]))
    hash_b = 0x8B51F9DD
    state = []
    for word in pool:
        word = (word ^ hash_b) & _MASK32
        hash_b = (hash_b * 0x58F38DED) & _MASK32
        word = (word * hash_b) & _MASK32
        state.append((word ^ (word >> 16)) & _MASK32)
    return state


class _ParentWatch:
    """Tells a worker whether the process that started it is still there."""

    def __init__(self) -> None:
        self.parent = os.getppid()

    def is_alive(self) -> bool:
        """False once the parent has died (the worker was re-parented)."""
        return os.getppid() == self.parent


def _worker_loop(iterable: bool, dataset, index_queue, data_queue, done_event, auto_collation: bool, collate_fn,
                 drop_last: bool, base_seed: int, init_fn, worker_id: int, num_workers: int,
                 tensor_rows: bool) -> None:
    """A worker process's body: seed, run ``init_fn``, then answer index messages until told to stop."""
    fetcher_type = _IterableFetcher if iterable else _MapFetcher
    try:
        set_num_threads(1)  # the workers share the machine's cores, as PyTorch's do
        seed = base_seed + worker_id
        random.seed(seed)
        tm.manual_seed(seed)
        np.random.seed(_numpy_seed_state(base_seed, worker_id))
        _CURRENT.info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = fetcher_type(dataset, auto_collation, collate_fn, drop_last, tensor_rows)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        watch = _ParentWatch()
        while watch.is_alive():
            try:
                message = index_queue.get(timeout=_WORKER_POLL_INTERVAL)
            except queue.Empty:
                if done_event.is_set():
                    # The loader shut down without a message getting here (its queues may have
                    # been finalized first when the iterator died in a reference cycle).
                    break
                continue
            if isinstance(message, _ResumeIteration):  # a persistent worker's new epoch
                data_queue.put((message, None))
                iteration_end = False
                fetcher = fetcher_type(dataset, auto_collation, collate_fn, drop_last, tensor_rows)
                continue
            if message is None:  # shutting down
                break
            if done_event.is_set() or iteration_end:
                continue  # drain what was sent before the end
            task, index = message
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as error:
                    if isinstance(error, StopIteration) and iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((task, data))
            del data, task, index, message  # free the batch before waiting for the next message
    except KeyboardInterrupt:
        pass  # the main process handles the interrupt and shuts the workers down
    if done_event.is_set():
        # Exiting must not wait for the main process to read what is still in the pipe.
        data_queue.cancel_join_thread()
        data_queue.close()
