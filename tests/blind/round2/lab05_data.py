"""Lab 05: answers written from the released notebook's text alone (blind corpus, round 2)."""

WRONG = {
    "batch_sampler": [
        ("one list object is reused for every batch (yield it, then batch.clear()): "
         "list(sampler) gives the same, emptied list several times",
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
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch.clear()
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
'''),
        ("the sampler's indices are copied into a list once, in __init__: a sampler that gives a "
         "new order on every pass is replayed with its first order",
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
        self.indices = list(sampler)
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        n = len(self.indices)
        stop = n - n % self.batch_size if self.drop_last else n
        for start in range(0, stop, self.batch_size):
            yield self.indices[start:start + self.batch_size]

    def __len__(self):
        if self.drop_last:
            return len(self.indices) // self.batch_size
        return (len(self.indices) + self.batch_size - 1) // self.batch_size
'''),
    ],
    "collate": [
        ("Python numbers become torch.tensor(...) (what torch's default_collate does) instead of "
         "the NumPy array the table asks for",
         '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    samples = list(samples)
    first = samples[0]
    if isinstance(first, torch.Tensor):
        return torch.stack(samples)
    if isinstance(first, np.ndarray):
        return np.stack(samples)
    if isinstance(first, dict):
        return {key: my_collate([s[key] for s in samples]) for key in first}
    if isinstance(first, tuple):
        return tuple(my_collate(list(column)) for column in zip(*samples))
    if isinstance(first, list):
        return [my_collate(list(column)) for column in zip(*samples)]
    if isinstance(first, np.generic):
        return np.array(samples)
    if isinstance(first, (bool, int, float)):
        return torch.tensor(samples)   # labels as a tensor, ready for the loss
    raise TypeError(f"cannot collate {type(first).__name__}")
'''),
        ("tuples and lists handled by one branch that always returns a tuple: a sample that is a "
         "list gives a tuple batch",
         '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    samples = list(samples)
    first = samples[0]
    if isinstance(first, torch.Tensor):
        return torch.stack(samples)
    if isinstance(first, np.ndarray):
        return np.stack(samples)
    if isinstance(first, dict):
        return {key: my_collate([s[key] for s in samples]) for key in first}
    if isinstance(first, (tuple, list)):
        return tuple(my_collate(list(column)) for column in zip(*samples))
    if isinstance(first, (bool, int, float, np.generic)):
        return np.array(samples)
    raise TypeError(f"cannot collate {type(first).__name__}")
'''),
    ],
    "dataloader": [
        ("__iter__ makes np.random.default_rng(seed) afresh each epoch: every epoch gets the same "
         "permutation",
         '''class MyDataLoader:
    """Iterates over `dataset` in batches; see the exercise text for the exact order.

    Args:
        dataset: a map-style dataset (`__len__` and `__getitem__`).
        batch_size: samples per batch.
        shuffle: a new random order every epoch.
        drop_last: drop the last batch when it is smaller than `batch_size`.
        seed: seed of the generator that draws the orders.
        collate_fn: turns a list of samples into a batch; `my_collate` when None.
    """

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
        if self.shuffle:
            rng = np.random.default_rng(self.seed)
            order = rng.permutation(len(self.dataset))
        else:
            order = range(len(self.dataset))
        for indices in MyBatchSampler(order, self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[int(i)] for i in indices])

    def __len__(self):
        return len(self.batch_sampler)
'''),
        ("the batch sampler is only built when iterating, so MyDataLoader(ds, batch_size=0) is "
         "accepted and the ValueError comes only at the first epoch",
         '''class MyDataLoader:
    """Iterates over `dataset` in batches; see the exercise text for the exact order.

    Args:
        dataset: a map-style dataset (`__len__` and `__getitem__`).
        batch_size: samples per batch.
        shuffle: a new random order every epoch.
        drop_last: drop the last batch when it is smaller than `batch_size`.
        seed: seed of the generator that draws the orders.
        collate_fn: turns a list of samples into a batch; `my_collate` when None.
    """

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, seed=None,
                 collate_fn=None):
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.rng = np.random.default_rng(seed)
        self.collate_fn = collate_fn or my_collate

    def _order(self):
        if self.shuffle:
            return self.rng.permutation(len(self.dataset))
        return range(len(self.dataset))

    def __iter__(self):
        for indices in MyBatchSampler(self._order(), self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[int(i)] for i in indices])

    def __len__(self):
        return len(MyBatchSampler(range(len(self.dataset)), self.batch_size, self.drop_last))
'''),
    ],
    "balanced_weights": [
        ("counts with np.bincount(labels): fine for 0..C-1 and for gaps, but labels that are "
         "negative integers raise",
         '''def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    labels = np.asarray(labels, dtype=np.int64)
    counts = np.bincount(labels)
    return 1.0 / counts[labels]
'''),
    ],
    "concat": [
        ("a negative index is handed to the last part (`self.datasets[-1][index]`): wrong when "
         "the last part is empty or shorter than -index",
         '''import bisect


class MyConcatDataset:
    """Several map-style datasets read as one, one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("datasets should not be an empty iterable")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        if index < 0:
            if -index > len(self):
                raise IndexError("index out of range")
            return self.datasets[-1][index]   # negative: count from the end
        if index >= len(self):
            raise IndexError("index out of range")
        part = bisect.bisect_right(self.cumulative_sizes, index)
        offset = self.cumulative_sizes[part - 1] if part > 0 else 0
        return self.datasets[part][index - offset]
'''),
        ("a negative index gets len added, but the result is not checked again: d[-len(d) - 1] "
         "returns the last item of the first part instead of raising IndexError",
         '''import bisect


class MyConcatDataset:
    """Several map-style datasets read as one, one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("datasets should not be an empty iterable")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        if index >= len(self):
            raise IndexError("index out of range")
        part = bisect.bisect_right(self.cumulative_sizes, index)
        offset = self.cumulative_sizes[part - 1] if part > 0 else 0
        return self.datasets[part][index - offset]
'''),
    ],
    "sharded": [
        ("contiguous chunks of ceil(n / num_workers): every integer once, but 10 over 4 workers "
         "gives 3, 3, 3, 1 (and 6 over 4 gives 2, 2, 2, 0)",
         '''from torch.utils.data import IterableDataset, get_worker_info


class ShardedRange(IterableDataset):
    """The integers start, ..., end - 1, split across DataLoader workers."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def shard(self, worker_id, num_workers):
        """An iterator over worker `worker_id`'s part of the range."""
        n = max(self.end - self.start, 0)
        per_worker = (n + num_workers - 1) // num_workers
        lo = self.start + worker_id * per_worker
        hi = min(lo + per_worker, self.end)
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
    "batch_sampler": [
        ("itertools.islice over one iterator per pass; len from divmod",
         '''import itertools


class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`.

    Args:
        sampler: an iterable of indices that has a length.
        batch_size: indices per list, a positive integer.
        drop_last: drop a final list shorter than `batch_size`.
    """

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError("batch_size should be a positive integer value, "
                             f"but got batch_size={batch_size}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = bool(drop_last)

    def __iter__(self):
        source = iter(self.sampler)
        while True:
            chunk = list(itertools.islice(source, self.batch_size))
            if not chunk or (self.drop_last and len(chunk) < self.batch_size):
                return
            yield chunk

    def __len__(self):
        full, rest = divmod(len(self.sampler), self.batch_size)
        return full + (1 if rest and not self.drop_last else 0)
'''),
    ],
    "concat": [
        ("no bisect: the index is normalised with %, then the parts are walked and their lengths "
         "subtracted; running totals from itertools.accumulate",
         '''import bisect
import itertools


class MyConcatDataset:
    """Several map-style datasets read as one, one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise ValueError("MyConcatDataset needs at least one dataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self):
        return sum(len(d) for d in self.datasets)

    def __getitem__(self, index):
        total = len(self)
        if not -total <= index < total:
            raise IndexError(f"index {index} out of range for a dataset of length {total}")
        index = index % total
        for part in self.datasets:
            if index < len(part):
                return part[index]
            index -= len(part)
        raise IndexError(index)  # not reached
'''),
    ],
    "sharded": [
        ("balanced contiguous slices from divmod (the first n % num_workers workers take one "
         "more), written as a generator",
         '''from torch.utils.data import IterableDataset, get_worker_info


class ShardedRange(IterableDataset):
    """The integers start, ..., end - 1, split across DataLoader workers."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def shard(self, worker_id, num_workers):
        """An iterator over worker `worker_id`'s part of the range."""
        n = max(0, self.end - self.start)
        base, extra = divmod(n, num_workers)
        first = self.start + worker_id * base + min(worker_id, extra)
        size = base + (1 if worker_id < extra else 0)
        value = first
        while value < first + size:
            yield value
            value += 1

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        return self.shard(info.id, info.num_workers)
'''),
    ],
}
