"""Datasets, samplers and ``DataLoader``, with PyTorch's ``torch.utils.data`` API.

>>> import tensormodes as tm
>>> from tensormodes.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(tm.arange(6.).reshape(3, 2), tm.tensor([0, 1, 0]))
>>> for x, y in DataLoader(ds, batch_size=2):
...     print(x.shape, y.tolist())
tensormodes.Size([2, 2]) [0, 1]
tensormodes.Size([1, 2]) [0]
"""

from .dataloader import (
    DataLoader,
    collate,
    default_collate,
    default_collate_fn_map,
    default_convert,
    get_worker_info,
)
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset", "Subset",
    "random_split",
    "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
    "BatchSampler", "DataLoader", "default_collate", "default_convert", "collate", "default_collate_fn_map",
    "get_worker_info", "DistributedSampler",
]
