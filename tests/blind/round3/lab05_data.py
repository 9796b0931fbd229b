"""Lab 05: answers written from the released notebook's text alone (blind corpus, round 3)."""

WRONG = {
    'batch_sampler': [
        ('reuses one list and clears it after each yield: a consumer that keeps the batches (list(sampler)) finds every kept batch to be the same, emptied list',
         '''class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`.

    Args:
        sampler: an iterable of indices that has a length.
        batch_size: indices per list, a positive integer.
        drop_last: drop a final list shorter than `batch_size`.
    """

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
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
                batch.clear()  # reuse the one list instead of allocating a new one per batch
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
'''),
        ('without drop_last the remainder is yielded unconditionally: an empty list [] comes as an extra last batch when the indices divide evenly (and for an empty sampler), so len() and iteration disagree',
         '''class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`.

    Args:
        sampler: an iterable of indices that has a length.
        batch_size: indices per list, a positive integer.
        drop_last: drop a final list shorter than `batch_size`.
    """

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
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
        if not self.drop_last:
            yield batch  # the remainder

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
'''),
    ],
    'collate': [
        ("Python floats are collated with dtype=np.float32 (the usual training dtype) instead of NumPy's float64: float leaves lose precision and get the wrong dtype",
         '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    first = samples[0]
    if isinstance(first, torch.Tensor):
        return torch.stack(samples)
    if isinstance(first, np.ndarray):
        return np.stack(samples)
    if isinstance(first, (bool, int, float, np.generic)):
        return np.array(samples, dtype=np.float32 if isinstance(first, float) else None)
    if isinstance(first, dict):
        return {key: my_collate([sample[key] for sample in samples]) for key in first}
    if isinstance(first, tuple):
        return tuple(my_collate(list(column)) for column in zip(*samples))
    if isinstance(first, list):
        return [my_collate(list(column)) for column in zip(*samples)]
    raise TypeError(f"cannot collate {type(first).__name__}")
'''),
        ("tensor leaves are stacked and then moved to 'cuda if available else cpu': the batch does not stay on the samples' device (meta samples land on the CPU)",
         '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    first = samples[0]
    if isinstance(first, torch.Tensor):
        # batches go where the model computes
        return torch.stack(samples).to("cuda" if torch.cuda.is_available() else "cpu")
    if isinstance(first, np.ndarray):
        return np.stack(samples)
    if isinstance(first, (bool, int, float, np.generic)):
        return np.array(samples)
    if isinstance(first, dict):
        return {key: my_collate([sample[key] for sample in samples]) for key in first}
    if isinstance(first, tuple):
        return tuple(my_collate(list(column)) for column in zip(*samples))
    if isinstance(first, list):
        return [my_collate(list(column)) for column in zip(*samples)]
    raise TypeError(f"cannot collate {type(first).__name__}")
'''),
    ],
    'dataloader': [
        ('the generator is re-created from the seed at the start of every epoch: with shuffle every epoch repeats the same permutation (and seed=None gives unreproducible orders instead)',
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
        self.collate_fn = my_collate if collate_fn is None else collate_fn
        self.seed = seed
        self.batch_sampler = MyBatchSampler(range(len(dataset)), batch_size, drop_last)

    def __iter__(self):
        if self.shuffle:
            rng = np.random.default_rng(self.seed)  # seeded, so runs are reproducible
            order = rng.permutation(len(self.dataset))
        else:
            order = range(len(self.dataset))
        for indices in MyBatchSampler(order, self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self):
        return len(self.batch_sampler)
'''),
        ('no MyBatchSampler is built in __init__ and len is computed arithmetically: an invalid batch_size (0, negative, 1.5) is not refused when the loader is built, only at iteration (or len gives nonsense)',
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
        self.collate_fn = my_collate if collate_fn is None else collate_fn
        self.rng = np.random.default_rng(seed)

    def __iter__(self):
        if self.shuffle:
            order = self.rng.permutation(len(self.dataset))
        else:
            order = range(len(self.dataset))
        for indices in MyBatchSampler(order, self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self):
        n, b = len(self.dataset), self.batch_size
        return n // b if self.drop_last else -(-n // b)
'''),
    ],
    'balanced_weights': [
        ('counts classes with np.bincount(labels): works for labels that are non-negative integers but raises for negative class labels, which the text allows (any integers)',
         '''def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    if isinstance(labels, torch.Tensor):
        labels = labels.cpu().numpy()
    labels = np.asarray(labels)
    counts = np.bincount(labels)
    return 1.0 / counts[labels]
'''),
    ],
    'concat': [
        ('bisect_left instead of bisect_right on the running totals: an index equal to a part boundary goes to the part before (one past its end), and into an empty part',
         '''import bisect


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
        n = len(self)
        if index < 0:
            if -index > n:
                raise IndexError("index out of range")
            index += n
        if index >= n:
            raise IndexError("index out of range")
        part = bisect.bisect_left(self.cumulative_sizes, index)
        start = self.cumulative_sizes[part - 1] if part > 0 else 0
        return self.datasets[part][index - start]
'''),
        ("a negative index is wrapped by adding len(d) but only the upper end is range-checked: d[-len(d)-1] becomes -1 and returns the first part's last item instead of raising IndexError",
         '''import bisect


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
        n = len(self)
        if index < 0:
            index += n
        if index >= n:
            raise IndexError("index out of range")
        part = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[part - 1] if part > 0 else 0
        return self.datasets[part][index - start]
'''),
    ],
    'sharded': [
        ('contiguous chunks of ceil(n / num_workers): every integer once, but the last shards can be two or more shorter than the others (10 over 4 workers: 3, 3, 3, 1; 4 over 3: 2, 2, 0)',
         '''from torch.utils.data import IterableDataset, get_worker_info


class ShardedRange(IterableDataset):
    """The integers start, ..., end - 1, split across DataLoader workers."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def shard(self, worker_id, num_workers):
        """An iterator over worker `worker_id`'s part of the range."""
        size = -(-(self.end - self.start) // num_workers)  # ceil: every element is covered
        lo = self.start + worker_id * size
        return iter(range(lo, min(lo + size, self.end)))

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        return self.shard(info.id, info.num_workers)
'''),
    ],
}

RIGHT = {
    'batch_sampler': [
        ('itertools.islice over one iterator of the sampler; len via divmod',
         '''import itertools


class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`.

    Args:
        sampler: an iterable of indices that has a length.
        batch_size: indices per list, a positive integer.
        drop_last: drop a final list shorter than `batch_size`.
    """

    def __init__(self, sampler, batch_size, drop_last):
        valid = isinstance(batch_size, int) and not isinstance(batch_size, bool) and batch_size >= 1
        if not valid:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, bool(drop_last)

    def __iter__(self):
        it = iter(self.sampler)
        while True:
            chunk = list(itertools.islice(it, self.batch_size))
            if not chunk:
                return
            if len(chunk) < self.batch_size and self.drop_last:
                return
            yield chunk

    def __len__(self):
        full, rest = divmod(len(self.sampler), self.batch_size)
        return full if (self.drop_last or rest == 0) else full + 1
'''),
    ],
    'balanced_weights': [
        ('counts with collections.Counter over plain Python ints, then weight = 1 / count per sample in a list comprehension',
         '''def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    from collections import Counter

    if isinstance(labels, torch.Tensor):
        labels = labels.tolist()
    labels = [int(label) for label in np.asarray(labels).ravel()]
    counts = Counter(labels)
    return np.array([1.0 / counts[label] for label in labels], dtype=np.float64)
'''),
    ],
    'concat': [
        ('no bisect: normalises the index like a list does, then walks through the parts subtracting their lengths',
         '''import bisect


class MyConcatDataset:
    """Several map-style datasets read as one, one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise ValueError("MyConcatDataset needs at least one dataset")

    def __len__(self):
        return sum(len(part) for part in self.datasets)

    def __getitem__(self, index):
        total = len(self)
        position = index + total if index < 0 else index
        if position < 0 or position >= total:
            raise IndexError(f"index {index} out of range for length {total}")
        for part in self.datasets:
            if position < len(part):
                return part[position]
            position -= len(part)
        raise IndexError(index)  # not reached
'''),
    ],
}
