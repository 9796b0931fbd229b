"""coursekit.data: datasets, samplers, collation and the DataLoader.

The names and their meaning follow ``torch.utils.data``, so the two read side by
side; the pieces work on NumPy arrays, coursekit tensors and torch tensors alike.
Importing this package does not import torch.

Data flows one way: ``Dataset`` → ``Sampler`` → ``BatchSampler`` →
``collate_fn`` → ``DataLoader``.
"""

from .collate import CollateError, default_collate, default_convert
from .dataloader import DataLoader
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    SampleBatch,
    Subset,
    TensorDataset,
    random_split,
)
from .pin_memory import PinMemoryWarning
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from .worker import DataLoaderTimeoutError, WorkerDiedError, WorkerInfo, WorkerTraceback, get_worker_info

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "ConcatDataset",
    "ChainDataset",
    "Subset",
    "SampleBatch",
    "random_split",
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "BatchSampler",
    "default_collate",
    "default_convert",
    "CollateError",
    "DataLoader",
    "get_worker_info",
    "WorkerInfo",
    "WorkerDiedError",
    "WorkerTraceback",
    "DataLoaderTimeoutError",
    "PinMemoryWarning",
]
