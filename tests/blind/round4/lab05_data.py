"""Lab 05: answers written from the released notebook's text alone (blind corpus, round 4)."""

WRONG = {
    "batch_sampler": [
        ("__len__ is ceil(n / batch_size) whatever drop_last says: with drop_last=True and a partial last list, len() is one more than the lists a pass yields",
         '''import math


class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`.

    Args:
        sampler: an iterable of indices that has a length.
        batch_size: indices per list, a positive integer.
        drop_last: drop a final list shorter than `batch_size`.
    """

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        return math.ceil(len(self.sampler) / self.batch_size)
'''),
        ("the final list is yielded whenever drop_last is False, even when it is empty: an empty sampler, or a length that batch_size divides, ends with an extra []",
         '''class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`.

    Args:
        sampler: an iterable of indices that has a length.
        batch_size: indices per list, a positive integer.
        drop_last: drop a final list shorter than `batch_size`.
    """

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if not self.drop_last:
            yield batch          # the rest

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size
'''),
        ("one list object is reused: after yielding a batch it is emptied with batch.clear(), so batches kept with list(sampler) all end up as the same (last, emptied) list",
         '''class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`.

    Args:
        sampler: an iterable of indices that has a length.
        batch_size: indices per list, a positive integer.
        drop_last: drop a final list shorter than `batch_size`.
    """

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch.clear()   # reuse the buffer instead of allocating a new list
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size
'''),
    ],
    "collate": [
        ("a tuple sample is collated into a list (as torch's default_collate does), not into a tuple",
         '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    elem = samples[0]
    if isinstance(elem, torch.Tensor):
        return torch.stack(list(samples))
    if isinstance(elem, np.ndarray):
        return np.stack(samples)
    if isinstance(elem, (bool, int, float, np.generic)):
        return np.array(samples)
    if isinstance(elem, dict):
        return {key: my_collate([s[key] for s in samples]) for key in elem}
    if isinstance(elem, (tuple, list)):
        return [my_collate(list(column)) for column in zip(*samples)]
    raise TypeError(f"cannot collate {type(elem).__name__}")
'''),
        ("Python numbers are dispatched with isinstance(elem, int) -> int64 before the float case: a bool is an int, so a column of bools becomes an int64 array instead of a bool array",
         '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    elem = samples[0]
    if isinstance(elem, torch.Tensor):
        return torch.stack(list(samples), dim=0)
    if isinstance(elem, np.ndarray):
        return np.stack(samples)
    if isinstance(elem, int):
        return np.array(samples, dtype=np.int64)
    if isinstance(elem, float):
        return np.array(samples, dtype=np.float64)
    if isinstance(elem, np.generic):
        return np.array(samples)
    if isinstance(elem, dict):
        return {key: my_collate([s[key] for s in samples]) for key in elem}
    if isinstance(elem, tuple):
        return tuple(my_collate(list(column)) for column in zip(*samples))
    if isinstance(elem, list):
        return [my_collate(list(column)) for column in zip(*samples)]
    raise TypeError(f"cannot collate {type(elem).__name__}")
'''),
    ],
    "dataloader": [
        ("the generator is made in __iter__ from the seed, np.random.default_rng(self.seed): with a seed, every epoch gets the same permutation",
         '''class MyDataLoader:
    """Iterates over `dataset` in batches; see the exercise text for the exact order."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, seed=None,
                 collate_fn=None):
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.seed = seed
        self.collate_fn = my_collate if collate_fn is None else collate_fn
        self.batch_sampler = MyBatchSampler(range(len(dataset)), batch_size, drop_last)

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            rng = np.random.default_rng(self.seed)
            order = rng.permutation(n)
        else:
            order = range(n)
        for indices in MyBatchSampler(order, self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self):
        return len(self.batch_sampler)
'''),
        ("__iter__ cuts the epoch with MyBatchSampler(order, self.batch_size, False): drop_last is honoured by len() but the short last batch is still yielded",
         '''class MyDataLoader:
    """Iterates over `dataset` in batches; see the exercise text for the exact order."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, seed=None,
                 collate_fn=None):
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.rng = np.random.default_rng(seed)
        self.collate_fn = collate_fn if collate_fn is not None else my_collate
        self.batch_sampler = MyBatchSampler(range(len(dataset)), batch_size, drop_last)

    def __iter__(self):
        n = len(self.dataset)
        order = self.rng.permutation(n) if self.shuffle else range(n)
        for indices in MyBatchSampler(order, self.batch_size, False):
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self):
        return len(self.batch_sampler)
'''),
    ],
    "balanced_weights": [
        ("counts from np.unique(labels, return_counts=True) are indexed by the label value (counts[labels]) instead of by the class's position: right only for classes 0..C-1 all present",
         '''def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    if isinstance(labels, torch.Tensor):
        labels = labels.cpu().numpy()
    labels = np.asarray(labels, dtype=np.int64)
    _, counts = np.unique(labels, return_counts=True)
    return 1.0 / counts[labels].astype(np.float64)
'''),
    ],
    "concat": [
        ("a negative index is shifted by len(d) before the range check, which only looks at the top: an index below -len(d) wraps round to an item of the first part instead of raising IndexError",
         '''import bisect
import itertools


class MyConcatDataset:
    """Several map-style datasets read as one, one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("MyConcatDataset needs at least one dataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        if index >= len(self):
            raise IndexError(f"index {index} out of range for {len(self)} items")
        part = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[part - 1] if part > 0 else 0
        return self.datasets[part][index - start]
'''),
    ],
    "sharded": [
        ("contiguous slices of n // num_workers, the last worker taking the whole remainder: with 10 items and 4 workers the parts are 2, 2, 2, 4 (more than one apart)",
         '''from torch.utils.data import IterableDataset, get_worker_info


class ShardedRange(IterableDataset):
    """The integers start, ..., end - 1, split across DataLoader workers."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def shard(self, worker_id, num_workers):
        """An iterator over worker `worker_id`'s part of the range."""
        n = max(self.end - self.start, 0)
        per_worker = n // num_workers
        lo = self.start + worker_id * per_worker
        hi = self.start + n if worker_id == num_workers - 1 else lo + per_worker
        return iter(range(lo, hi))

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        return self.shard(info.id, info.num_workers)
'''),
    ],
}

RIGHT = {
    "dataloader": [
        ("shuffles np.arange(n) in place with self.rng.shuffle (the same draw as rng.permutation(n)); batches come from a generator method and the index lists are fetched with a helper",
         '''class MyDataLoader:
    """Iterates over `dataset` in batches; see the exercise text for the exact order."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, seed=None,
                 collate_fn=None):
        # built once here: an invalid batch_size raises now, and len() reads it
        self._plain = MyBatchSampler(range(len(dataset)), batch_size, drop_last)
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.shuffle = shuffle
        self.rng = np.random.default_rng(seed)
        self.collate_fn = my_collate if collate_fn is None else collate_fn

    def _fetch(self, indices):
        return self.collate_fn([self.dataset[int(i)] for i in indices])

    def __iter__(self):
        if not self.shuffle:
            sampler = self._plain
        else:
            order = np.arange(len(self.dataset))
            self.rng.shuffle(order)
            sampler = MyBatchSampler(order.tolist(), self.batch_size, self.drop_last)
        for indices in sampler:
            yield self._fetch(indices)

    def __len__(self):
        return len(self._plain)
'''),
    ],
    "concat": [
        ("no running totals: walks through the parts, subtracting each part's length, after normalising the index by hand",
         '''import bisect


class MyConcatDataset:
    """Several map-style datasets read as one, one after the other."""

    def __init__(self, datasets):
        self.datasets = [d for d in datasets]
        if len(self.datasets) == 0:
            raise ValueError("need at least one dataset")

    def __len__(self):
        return sum(len(d) for d in self.datasets)

    def __getitem__(self, index):
        total = len(self)
        if index < -total or index >= total:
            raise IndexError(f"index {index} is out of range [-{total}, {total})")
        if index < 0:
            index = total + index
        for part in self.datasets:
            if index < len(part):
                return part[index]
            index -= len(part)
        raise IndexError(index)  # not reached
'''),
    ],
    "sharded": [
        ("even contiguous slices: the first n % num_workers workers take one extra element (parts differ by at most one); islice over the range",
         '''import itertools

from torch.utils.data import IterableDataset, get_worker_info


class ShardedRange(IterableDataset):
    """The integers start, ..., end - 1, split across DataLoader workers."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def shard(self, worker_id, num_workers):
        """An iterator over worker `worker_id`'s part of the range."""
        n = max(0, self.end - self.start)
        base, extra = divmod(n, num_workers)
        first = worker_id * base + min(worker_id, extra)
        size = base + (1 if worker_id < extra else 0)
        return itertools.islice(range(self.start, self.end), first, first + size)

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        return self.shard(info.id, info.num_workers)
'''),
    ],
}
