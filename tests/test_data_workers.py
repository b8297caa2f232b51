"""``DataLoader(num_workers=N)``: real worker processes with PyTorch's seeds, order and errors;
lazy samplers; ``DistributedSampler``. Small datasets and two workers keep this fast."""

from __future__ import annotations

import gc
import multiprocessing
import os
import random
import time
import warnings

import numpy as np
import pytest

import tensormodes as tm
from tensormodes.utils.data import (
    DataLoader,
    Dataset,
    DistributedSampler,
    IterableDataset,
    RandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    get_worker_info,
)


def _torch():
    return pytest.importorskip("torch")


class Squares(Dataset):
    """Index, its square as a tensor and a dict: exercises collation in the workers."""

    def __len__(self):
        return 11

    def __getitem__(self, i):
        return i, tm.tensor([i * i, -i]), {"half": i / 2}


def _values(batch):
    """A batch as plain Python values (tensors as lists, with their dtype)."""
    if isinstance(batch, tm.Tensor):
        return batch.tolist(), str(batch.dtype)
    if isinstance(batch, dict):
        return {k: _values(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return [_values(v) for v in batch]
    return batch


def _epoch(loader):
    return [_values(b) for b in loader]


def _no_live_workers():
    deadline = time.monotonic() + 10
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.02)
    return not multiprocessing.active_children()


@pytest.mark.parametrize("options", [
    dict(batch_size=3, shuffle=True),
    dict(batch_size=4, shuffle=True, drop_last=True),
    dict(batch_size=None),
    dict(batch_size=2, shuffle=True, prefetch_factor=1),
])
def test_worker_batches_equal_single_process_batches(options):
    dataset = Squares()
    runs = []
    for workers in (0, 2):
        extra = {} if workers or "prefetch_factor" not in options else {"prefetch_factor": None}
        generator = tm.Generator().manual_seed(5)
        loader = DataLoader(dataset, num_workers=workers, generator=generator, **{**options, **extra})
        runs.append((_epoch(loader), _epoch(loader), generator.get_state().tolist()))
    assert runs[0] == runs[1]  # same batches, same order, and the generator drew the same numbers
    assert _no_live_workers()


def test_tensor_dataset_and_out_of_order_delivery():
    dataset = TensorDataset(tm.arange(20.).reshape(10, 2), tm.arange(10))
    expected = _epoch(DataLoader(dataset, batch_size=3, shuffle=True, generator=tm.Generator().manual_seed(1)))
    loader = DataLoader(dataset, batch_size=3, shuffle=True, num_workers=2, generator=tm.Generator().manual_seed(1))
    assert _epoch(loader) == expected
    unordered = DataLoader(dataset, batch_size=3, shuffle=True, num_workers=2, in_order=False,
                           generator=tm.Generator().manual_seed(1))
    assert sorted(map(str, _epoch(unordered))) == sorted(map(str, expected))


class SeedReport(Dataset):
    """What a worker knows about itself, and the first draws of each random generator."""

    def __len__(self):
        return 6

    def __getitem__(self, i):
        info = get_worker_info()
        return (i, info.id, info.num_workers, str(info.seed), str(tm.initial_seed()), tm.rand(2),
                float(np.random.rand()), random.random(), type(info.dataset).__name__)


def _base_seed(seed):
    return int(tm.empty((), dtype=tm.int64).random_(generator=tm.Generator().manual_seed(seed)).item())


def test_worker_seeds_are_base_seed_plus_worker_id():
    base = _base_seed(3)
    loader = DataLoader(SeedReport(), batch_size=2, num_workers=2, generator=tm.Generator().manual_seed(3))
    batches = list(loader)
    assert [b[0].tolist() for b in batches] == [[0, 1], [2, 3], [4, 5]]
    assert [b[1].tolist() for b in batches] == [[0, 0], [1, 1], [0, 0]]  # task k goes to worker k % 2
    assert [b[2].tolist() for b in batches] == [[2, 2]] * 3
    for batch in batches:
        worker = batch[1][0].item()
        assert batch[3] == batch[4] == (str(base + worker),) * 2  # tm.initial_seed() is the worker's seed
    assert batches[0][8] == ("SeedReport", "SeedReport")
    # the worker's default generator was seeded with base_seed + id
    assert batches[0][5][0].tolist() == tm.rand(2, generator=tm.Generator().manual_seed(base)).tolist()


@pytest.mark.torch
def test_worker_seeds_and_draws_match_torch():
    torch = _torch()

    def run(L):
        class Report(L.utils.data.Dataset):
            def __len__(self):
                return 6

            def __getitem__(self, i):
                info = L.utils.data.get_worker_info()
                return i, info.id, str(info.seed), str(L.initial_seed()), L.rand(2), float(np.random.rand()), \
                    random.random(), L.randint(0, 100, (2,))

        out = []
        for seed in (0, 3):
            loader = L.utils.data.DataLoader(Report(), batch_size=2, shuffle=True, num_workers=2,
                                             generator=L.Generator().manual_seed(seed))
            out += [[v.tolist() if isinstance(v, L.Tensor) else v for v in batch] for batch in loader]
        return out

    assert run(tm) == run(torch)


def test_worker_init_fn_runs_in_each_worker_before_loading():
    def init(worker_id):
        get_worker_info().dataset.offset = 100 * (worker_id + 1)

    class Offset(Dataset):
        offset = 0

        def __len__(self):
            return 4

        def __getitem__(self, i):
            return i + self.offset

    loader = DataLoader(Offset(), batch_size=1, num_workers=2, worker_init_fn=init)
    assert [b.tolist() for b in loader] == [[100], [201], [102], [203]]
    assert Offset.offset == 0  # the main process's dataset is untouched


class Range(IterableDataset):
    """``range(start, end)``, split between the workers with ``get_worker_info``."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        per_worker = -(-(self.end - self.start) // info.num_workers)
        first = self.start + info.id * per_worker
        return iter(range(first, min(first + per_worker, self.end)))


def test_iterable_dataset_is_sharded_by_the_workers():
    assert [b.tolist() for b in DataLoader(Range(3, 10), batch_size=2)] == [[3, 4], [5, 6], [7, 8], [9]]
    # worker 0 has 3..6, worker 1 has 7..9; batches alternate between the workers
    loader = DataLoader(Range(3, 10), batch_size=2, num_workers=2)
    assert [b.tolist() for b in loader] == [[3, 4], [7, 8], [5, 6], [9]]
    unbatched = DataLoader(Range(3, 10), batch_size=None, num_workers=2)
    assert [b for b in unbatched] == [3, 7, 4, 8, 5, 9, 6]
    dropped = DataLoader(Range(3, 10), batch_size=2, num_workers=2, drop_last=True)
    assert [b.tolist() for b in dropped] == [[3, 4], [7, 8], [5, 6]]


@pytest.mark.torch
def test_iterable_dataset_with_workers_matches_torch():
    torch = _torch()

    def run(L):
        class Shard(L.utils.data.IterableDataset):
            def __iter__(self):
                info = L.utils.data.get_worker_info()
                return iter(range(info.id * 10, info.id * 10 + 3 + 2 * info.id))

        return [[b.tolist() for b in L.utils.data.DataLoader(Shard(), batch_size=bs, num_workers=2, drop_last=d)]
                for bs, d in ((2, False), (2, True), (3, False))]

    assert run(tm) == run(torch)


class Faulty(Dataset):
    def __init__(self, error):
        self.error = error

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise self.error
        return i


def test_a_workers_exception_is_reraised_with_pytorchs_wording_and_workers_stop():
    loader = DataLoader(Faulty(ValueError("bad sample")), batch_size=2, num_workers=2)
    seen = []
    with pytest.raises(ValueError) as caught:
        for batch in loader:
            seen.append(batch.tolist())
    message = str(caught.value)
    assert seen == [[0, 1], [2, 3]]
    assert message.startswith("Caught ValueError in DataLoader worker process 0.\nOriginal Traceback (most recent "
                              "call last):\n")
    assert message.rstrip().endswith("ValueError: bad sample") and "in __getitem__" in message
    del caught
    gc.collect()
    assert _no_live_workers()
    with pytest.raises(KeyError) as caught:  # shown as it is, not as the repr of a string
        list(DataLoader(Faulty(KeyError("k")), batch_size=4, num_workers=2))
    assert str(caught.value).startswith("Caught KeyError in DataLoader worker process 1.\nOriginal Traceback")
    del caught
    gc.collect()
    assert _no_live_workers()


def test_an_exception_in_worker_init_fn_comes_with_the_first_task():
    def init(worker_id):
        if worker_id == 1:
            raise RuntimeError("no init")

    loader = DataLoader(range(6), batch_size=2, num_workers=2, worker_init_fn=init)
    iterator = iter(loader)
    assert next(iterator).tolist() == [0, 1]
    with pytest.raises(RuntimeError, match=r"^Caught RuntimeError in DataLoader worker process 1\.\nOriginal "):
        next(iterator)
    assert next(iterator).tolist() == [4, 5]  # the other worker goes on, as in PyTorch
    del iterator
    gc.collect()
    assert _no_live_workers()


class Pid(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return os.getpid()


def test_persistent_workers_serve_every_epoch():
    loader = DataLoader(Pid(), batch_size=2, num_workers=2, persistent_workers=True)
    first = [b.tolist() for b in loader]
    second = [b.tolist() for b in loader]
    assert first == second and len({pid for batch in first for pid in batch}) == 2
    assert os.getpid() not in first[0]
    iterator = loader._iterator
    assert all(w.is_alive() for w in iterator._workers)
    del loader, iterator
    gc.collect()
    assert _no_live_workers()
    short_lived = DataLoader(Pid(), batch_size=2, num_workers=2)
    assert [b.tolist() for b in short_lived] != [b.tolist() for b in short_lived]  # new workers each epoch


@pytest.mark.torch
def test_persistent_workers_draw_as_torch():
    torch = _torch()

    def run(L):
        g = L.Generator().manual_seed(2)
        loader = L.utils.data.DataLoader(L.utils.data.TensorDataset(L.arange(7)), batch_size=3, shuffle=True,
                                         num_workers=2, persistent_workers=True, generator=g)
        epochs = [[b[0].tolist() for b in loader] for _ in range(3)]
        return epochs, g.get_state().tolist()

    assert run(tm) == run(torch)


def test_pin_memory_is_accepted_with_pytorchs_warning_and_timeout_needs_workers():
    with pytest.warns(UserWarning, match="^'pin_memory' argument is set as true but no accelerator is found, then "
                                         "device pinned memory won't be used.$"):
        assert [b.tolist() for b in DataLoader(range(3), batch_size=2, pin_memory=True)] == [[0, 1], [2]]
    with pytest.raises(AssertionError, match="^_SingleProcessDataLoaderIter requires timeout == 0$"):
        iter(DataLoader(range(3), timeout=1))
    assert DataLoader(range(3), num_workers=2).prefetch_factor == 2


def test_worker_number_warning_names_the_cpus():
    cpus = len(os.sched_getaffinity(0))
    with pytest.warns(UserWarning, match=f"^This DataLoader will create {cpus + 1} worker processes in total. Our "
                                         f"suggested max number of worker in current system is {cpus}, "):
        DataLoader(range(3), num_workers=cpus + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DataLoader(range(3), num_workers=1)


class Slow(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(0.5)
        return i


def test_timeout():
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0.1 seconds$"):
        next(iter(DataLoader(Slow(), num_workers=1, timeout=0.1)))
    gc.collect()
    assert _no_live_workers()


# -- samplers ------------------------------------------------------------------------------------

def test_random_sampler_with_replacement_is_lazy_and_draws_chunks_of_32():
    generator = tm.Generator().manual_seed(0)
    sampler = RandomSampler(range(10), replacement=True, num_samples=10 ** 10, generator=generator)
    assert len(sampler) == 10 ** 10
    start = time.perf_counter()
    iterator = iter(sampler)
    first = [next(iterator) for _ in range(33)]
    assert time.perf_counter() - start < 1.0
    reference = tm.Generator().manual_seed(0)
    chunks = tm.randint(high=10, size=(64,), generator=reference)
    assert first == chunks[:33].tolist()
    assert generator.get_state().tolist() == reference.get_state().tolist()  # two whole chunks drawn
    loader = DataLoader(range(10), batch_size=40, sampler=RandomSampler(range(10), replacement=True,
                                                                         num_samples=10 ** 10,
                                                                         generator=tm.Generator().manual_seed(0)))
    batches = iter(loader)
    assert next(batches).tolist() == chunks[:40].tolist()
    huge = RandomSampler(range(3), num_samples=10 ** 10, generator=tm.Generator().manual_seed(1))
    assert sorted(next(iter(DataLoader(range(3), sampler=huge, batch_size=3))).tolist()) == [0, 1, 2]


def test_random_sampler_with_replacement_values():
    sampler = RandomSampler(range(7), replacement=True, num_samples=70, generator=tm.Generator().manual_seed(2))
    assert list(sampler)[30:36] == [2, 3, 3, 4, 1, 5]  # PyTorch 2.13's values
    batches = DataLoader(TensorDataset(tm.arange(7)), batch_size=20, sampler=RandomSampler(
        range(7), replacement=True, num_samples=70, generator=tm.Generator().manual_seed(2)))
    assert tm.cat([b[0] for b in batches]).tolist() == list(RandomSampler(
        range(7), replacement=True, num_samples=70, generator=tm.Generator().manual_seed(2)))


@pytest.mark.torch
def test_lazy_samplers_match_torch_streams():
    torch = _torch()

    def run(L):
        out = []
        for replacement, num_samples, n in ((True, 10 ** 10, 10), (True, 70, 7), (False, 10 ** 10, 5),
                                            (False, 13, 5)):
            g = L.Generator().manual_seed(num_samples % 97)
            iterator = iter(L.utils.data.RandomSampler(range(n), replacement, num_samples, generator=g))
            out.append([next(iterator) for _ in range(min(num_samples, 45))])
            out.append(g.get_state().tolist())
            g = L.Generator().manual_seed(1)
            loader = L.utils.data.DataLoader(L.utils.data.TensorDataset(L.arange(n)), batch_size=6,
                                             sampler=L.utils.data.RandomSampler(range(n), replacement, num_samples,
                                                                                generator=g))
            batches = iter(loader)
            out.append([next(batches)[0].tolist() for _ in range(min(num_samples // 6, 5))])
            out.append(g.get_state().tolist())
        g = L.Generator().manual_seed(4)
        weighted = iter(L.utils.data.WeightedRandomSampler([0.2, 0.5, 0.3], 9, generator=g))
        out.append(g.get_state().tolist())  # nothing drawn before the first index
        out.append(list(weighted))
        return out

    assert run(tm) == run(torch)


def test_weighted_sampler_draws_at_its_first_index():
    generator = tm.Generator().manual_seed(4)
    before = generator.get_state().tolist()
    iterator = iter(WeightedRandomSampler([0.2, 0.5, 0.3], 9, generator=generator))
    assert generator.get_state().tolist() == before
    assert len(list(iterator)) == 9 and generator.get_state().tolist() != before


def test_distributed_sampler_splits_one_shared_order():
    assert [list(DistributedSampler(range(5), num_replicas=2, rank=r, shuffle=False)) for r in (0, 1)] == \
        [[0, 2, 4], [1, 3, 0]]
    assert [list(DistributedSampler(range(5), 2, r, shuffle=False, drop_last=True)) for r in (0, 1)] == [[0, 2],
                                                                                                          [1, 3]]
    order = tm.randperm(10, generator=tm.Generator().manual_seed(7 + 3)).tolist()
    shards = []
    for rank in range(3):
        sampler = DistributedSampler(range(10), num_replicas=3, rank=rank, seed=7)
        sampler.set_epoch(3)
        shards.append(list(sampler))
        assert len(sampler) == 4
    assert shards == [(order + order[:2])[r::3] for r in range(3)]
    assert [list(DistributedSampler(range(2), num_replicas=5, rank=r, shuffle=False)) for r in (3, 4)] == [[1], [0]]
    with pytest.raises(ValueError, match=r"^Invalid rank 2, rank should be in the interval \[0, 1\]$"):
        DistributedSampler(range(3), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="^Default process group has not been initialized"):
        DistributedSampler(range(3))


@pytest.mark.torch
def test_distributed_sampler_matches_torch():
    torch = _torch()

    def run(L):
        out = []
        for n, replicas, shuffle, seed, epoch, drop_last in ((10, 3, True, 0, 0, False), (10, 3, True, 5, 2, True),
                                                             (7, 2, False, 0, 0, False), (3, 5, True, 1, 1, False),
                                                             (11, 4, True, 0, 9, True)):
            for rank in range(replicas):
                sampler = L.utils.data.DistributedSampler(range(n), replicas, rank, shuffle, seed, drop_last)
                sampler.set_epoch(epoch)
                out.append((list(sampler), len(sampler), sampler.total_size))
        for kwargs in ({"num_replicas": 2, "rank": -1}, {"num_replicas": 2}, {"rank": 0}):
            try:
                L.utils.data.DistributedSampler(range(4), **kwargs)
            except Exception as error:
                out.append((type(error).__name__, str(error)))
        return out

    assert run(tm) == run(torch)
