"""Lab 05: answers written from the released notebook's text alone (blind corpus, issue 27)."""

WRONG = {
    "batch_sampler": [
        ("len() without drop_last is n // batch_size + 1: one list too many when batch_size divides n (and 1 for an empty sampler)", '''class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`."""

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
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return len(self.sampler) // self.batch_size + 1     # the last, shorter list
'''),
        ("copies the sampler into a list once in __init__: every later pass repeats the first pass's order", '''class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`."""

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.indices = list(sampler)          # read it once, slice it later
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        for start in range(0, len(self.indices), self.batch_size):
            batch = self.indices[start:start + self.batch_size]
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield batch

    def __len__(self):
        n = len(self.indices)
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size
'''),
    ],
    "collate": [
        ("tuple samples come back as a list of columns (list comprehension over zip), not as a tuple", '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    first = samples[0]
    if isinstance(first, torch.Tensor):
        if any(s.shape != first.shape for s in samples):
            raise ValueError("tensors of different shapes cannot be stacked")
        return torch.stack(list(samples))
    if isinstance(first, np.ndarray):
        return np.stack(samples)
    if isinstance(first, dict):
        return {key: my_collate([s[key] for s in samples]) for key in first}
    if isinstance(first, (tuple, list)):
        return [my_collate(list(column)) for column in zip(*samples)]
    return np.array(samples)
'''),
        ("torch leaves copied into a preallocated torch.empty batch created without device=: the batch lands on the CPU", '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    first = samples[0]
    if isinstance(first, torch.Tensor):
        if any(s.shape != first.shape for s in samples):
            raise ValueError("tensors of different shapes cannot be stacked")
        batch = torch.empty((len(samples),) + tuple(first.shape), dtype=first.dtype)
        for k, sample in enumerate(samples):
            batch[k] = sample
        return batch
    if isinstance(first, np.ndarray):
        return np.stack(samples)
    if isinstance(first, dict):
        return {key: my_collate([s[key] for s in samples]) for key in first}
    if isinstance(first, tuple):
        return tuple(my_collate(list(column)) for column in zip(*samples))
    if isinstance(first, list):
        return [my_collate(list(column)) for column in zip(*samples)]
    return np.array(samples)
'''),
    ],
    "dataloader": [
        ("builds np.random.default_rng(seed) afresh in __iter__: with a seed, every epoch has the same order", '''class MyDataLoader:
    """Iterates over `dataset` in batches; see the exercise text for the exact order."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, seed=None,
                 collate_fn=None):
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.seed = seed
        self.collate_fn = my_collate if collate_fn is None else collate_fn
        self.batches = MyBatchSampler(range(len(dataset)), batch_size, drop_last)

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            rng = np.random.default_rng(self.seed)
            order = rng.permutation(n).tolist()
        else:
            order = list(range(n))
        for indices in MyBatchSampler(order, self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self):
        return len(self.batches)
'''),
        ("len(loader) is ceil(n / batch_size) whatever drop_last says", '''class MyDataLoader:
    """Iterates over `dataset` in batches; see the exercise text for the exact order."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, seed=None,
                 collate_fn=None):
        MyBatchSampler(range(len(dataset)), batch_size, drop_last)     # validates batch_size now
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.rng = np.random.default_rng(seed)
        self.collate_fn = my_collate if collate_fn is None else collate_fn

    def __iter__(self):
        n = len(self.dataset)
        order = self.rng.permutation(n).tolist() if self.shuffle else list(range(n))
        for indices in MyBatchSampler(order, self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self):
        return -(-len(self.dataset) // self.batch_size)
'''),
    ],
    "balanced_weights": [
        ("1 / np.bincount(labels)[labels]: assumes labels are non-negative small integers (negative labels raise)", '''def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    labels = np.asarray(labels).astype(np.int64)
    counts = np.bincount(labels)
    return 1.0 / counts[labels]
'''),
    ],
    "concat": [
        ("adds len(d) to a negative index but never checks it is still negative: d[-len(d) - 1] silently wraps into a part", '''import bisect


class MyConcatDataset:
    """Several map-style datasets read as one, one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("datasets should not be an empty iterable")
        self.cumulative_sizes = []
        total = 0
        for part in self.datasets:
            total += len(part)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        if index >= len(self):
            raise IndexError(f"index {index} out of range for length {len(self)}")
        part = bisect.bisect_right(self.cumulative_sizes, index)
        offset = self.cumulative_sizes[part - 1] if part > 0 else 0
        return self.datasets[part][index - offset]
'''),
    ],
    "sharded": [
        ("contiguous chunks of ceil(n / num_workers): the last worker can get 2+ fewer elements (10 over 4 gives 3, 3, 3, 1)", '''from torch.utils.data import IterableDataset, get_worker_info


class ShardedRange(IterableDataset):
    """The integers start, ..., end - 1, split across DataLoader workers."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def shard(self, worker_id, num_workers):
        """An iterator over worker `worker_id`'s part of the range."""
        n = max(0, self.end - self.start)
        chunk = -(-n // num_workers)                 # ceil(n / num_workers)
        lo = self.start + worker_id * chunk
        hi = min(self.end, lo + chunk)
        return iter(range(lo, hi))

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        return self.shard(info.id, info.num_workers)
'''),
        ("interleaved shard as range(worker_id, end, num_workers): forgets the start offset", '''from torch.utils.data import IterableDataset, get_worker_info


class ShardedRange(IterableDataset):
    """The integers start, ..., end - 1, split across DataLoader workers."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def shard(self, worker_id, num_workers):
        """An iterator over worker `worker_id`'s part of the range."""
        return iter(range(worker_id, self.end, num_workers))

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        return self.shard(info.id, info.num_workers)
'''),
    ],
}

RIGHT = {
    "balanced_weights": [
        ("collections.Counter over the labels as Python ints, weights 1 / (C * count) so they sum to 1", '''from collections import Counter


def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    values = np.asarray(labels).reshape(-1).tolist()
    counts = Counter(values)
    num_classes = len(counts)
    return np.array([1.0 / (num_classes * counts[v]) for v in values], dtype=np.float64)
'''),
    ],
    "dataloader": [
        ("orders as index lists, batches fetched with map(dataset.__getitem__, ...), len from a batch sampler kept from __init__", '''class MyDataLoader:
    """Iterates over `dataset` in batches; see the exercise text for the exact order."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, seed=None,
                 collate_fn=None):
        # Built now, so an invalid batch_size raises here; it also knows len().
        self._sequential = MyBatchSampler(range(len(dataset)), batch_size, drop_last)
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.rng = np.random.default_rng(seed)
        self.collate_fn = collate_fn if collate_fn is not None else my_collate

    def _epoch_order(self):
        if not self.shuffle:
            return range(len(self.dataset))
        return [int(i) for i in self.rng.permutation(len(self.dataset))]   # one draw per epoch

    def __iter__(self):
        batches = MyBatchSampler(self._epoch_order(), self.batch_size, self.drop_last)
        for indices in batches:
            yield self.collate_fn(list(map(self.dataset.__getitem__, indices)))

    def __len__(self):
        return len(self._sequential)
'''),
    ],
    "sharded": [
        ("contiguous balanced slices: worker w reads [start + n*w // k, start + n*(w+1) // k)", '''from torch.utils.data import IterableDataset, get_worker_info


class ShardedRange(IterableDataset):
    """The integers start, ..., end - 1, split across DataLoader workers."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def shard(self, worker_id, num_workers):
        """An iterator over worker `worker_id`'s part of the range."""
        n = max(0, self.end - self.start)
        lo = self.start + (n * worker_id) // num_workers
        hi = self.start + (n * (worker_id + 1)) // num_workers
        return iter(range(lo, hi))      # sizes floor or ceil of n / num_workers

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        return self.shard(info.id, info.num_workers)
'''),
    ],
}
