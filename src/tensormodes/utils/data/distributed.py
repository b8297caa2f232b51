"""``DistributedSampler``: the share of a dataset's indices that one replica of a
data-parallel job visits."""

from __future__ import annotations

import math
from collections.abc import Iterator

from ... import distributed as dist
from ..._api import namespace as tm
from .dataset import Dataset
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Sampler that restricts data loading to a subset of the dataset: replica ``rank`` of
    ``num_replicas`` takes every ``num_replicas``-th index of one shared order.

    With ``shuffle=True`` the shared order is ``randperm`` from a generator seeded with
    ``seed + epoch`` (call ``set_epoch`` at each epoch), so every replica — and PyTorch —
    computes the same one. Without ``drop_last`` the order is padded with its own first
    indices to a multiple of ``num_replicas``; with it, the tail is dropped. tensormodes
    has no process group, so ``num_replicas`` and ``rank`` must be given.

    >>> import tensormodes as tm
    >>> from tensormodes.utils.data import DistributedSampler
    >>> [list(DistributedSampler(range(5), num_replicas=2, rank=r, shuffle=False)) for r in (0, 1)]
    [[0, 2, 4], [1, 3, 0]]
    """

    def __init__(self, dataset: Dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        # Without a process group these raise PyTorch's error for an uninitialized one.
        if num_replicas is None:
            num_replicas = dist.get_world_size()
        if rank is None:
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            # drop the tail so that every replica gets the same number of indices
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        if self.shuffle:
            generator = tm.Generator().manual_seed(self.seed + self.epoch)
            indices = tm.randperm(len(self.dataset), generator=generator).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch for this sampler: with ``shuffle=True`` each epoch gets its own order,
        the same on every replica."""
        self.epoch = epoch
