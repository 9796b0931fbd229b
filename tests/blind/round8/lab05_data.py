"""Lab 05: answers written from the released notebook's text alone (blind corpus, round 8)."""

WRONG = {
    'batch_sampler': [
        ("validates with isinstance(batch_size, int) and batch_size > 0 but forgets that bool is a subclass of int: batch_size=True is accepted as a batch size of 1 instead of raising ValueError ('a batch_size that is not a positive integer raises ValueError')", '''class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`.

    Args:
        sampler: an iterable of indices that has a length.
        batch_size: indices per list, a positive integer.
        drop_last: drop a final list shorter than `batch_size`.
    """

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

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
        n = len(self.sampler)
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size
'''),
        ("__len__ counts the indices with len(list(self.sampler)): right for a range or a list, but for a sampler object it runs a whole pass, so a shuffling sampler with its own generator is advanced and the next iteration's order is not the one it would have given", '''class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`.

    Args:
        sampler: an iterable of indices that has a length.
        batch_size: indices per list, a positive integer.
        drop_last: drop a final list shorter than `batch_size`.
    """

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

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
        n = len(list(self.sampler))
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size
'''),
    ],
    'collate': [
        ("rebuilds tuples and lists generically with type(first)(generator): right for plain tuples and lists, but a namedtuple sample (still a tuple) raises TypeError, since a namedtuple's constructor wants one argument per field", '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    first = samples[0]
    if isinstance(first, torch.Tensor):
        return torch.stack(samples)
    if isinstance(first, np.ndarray):
        return np.stack(samples)
    if isinstance(first, (bool, int, float, np.generic)):
        return np.array(samples)
    if isinstance(first, dict):
        return {key: my_collate([s[key] for s in samples]) for key in first}
    if isinstance(first, (tuple, list)):
        return type(first)(my_collate(list(group)) for group in zip(*samples))
    raise TypeError(f"cannot collate {type(first).__name__}")
'''),
        ("reuses the first sample's dict/list as the batch container and fills it in place: the output has the right structure, but the caller's sample (often the very object a list-backed dataset stores) is overwritten by the batch, so the next epoch reads batches instead of samples", '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    first = samples[0]
    if isinstance(first, torch.Tensor):
        return torch.stack(samples)
    if isinstance(first, np.ndarray):
        return np.stack(samples)
    if isinstance(first, (bool, int, float, np.generic)):
        return np.array(samples)
    if isinstance(first, dict):
        for key in list(first):
            first[key] = my_collate([s[key] for s in samples])
        return first
    if isinstance(first, tuple):
        return tuple(my_collate(list(group)) for group in zip(*samples))
    if isinstance(first, list):
        columns = [list(group) for group in zip(*samples)]
        for position, column in enumerate(columns):
            first[position] = my_collate(column)
        return first
    raise TypeError(f"cannot collate {type(first).__name__}")
'''),
    ],
    'dataloader': [
        ("treats seed=0 as 'no seed' (default_rng(seed or None)): a loader built with seed 0 draws from fresh entropy, so two loaders with seed 0 disagree", '''class MyDataLoader:
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
        self.dataset, self.batch_size = dataset, batch_size
        self.shuffle, self.drop_last = shuffle, drop_last
        self.collate_fn = my_collate if collate_fn is None else collate_fn
        self.rng = np.random.default_rng(seed or None)
        self.batches = MyBatchSampler(range(len(dataset)), batch_size, drop_last)

    def __iter__(self):
        if self.shuffle:
            order = self.rng.permutation(len(self.dataset))
        else:
            order = range(len(self.dataset))
        for indices in MyBatchSampler(order, self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self):
        return len(self.batches)
'''),
        ('draws the first order in __init__ and the next one after the last batch of an epoch: full epochs match, but an epoch left early (break) never draws, so the next epoch repeats the same order instead of a fresh permutation at its start', '''class MyDataLoader:
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
        self.dataset, self.batch_size = dataset, batch_size
        self.shuffle, self.drop_last = shuffle, drop_last
        self.collate_fn = my_collate if collate_fn is None else collate_fn
        self.rng = np.random.default_rng(seed)
        self.batches = MyBatchSampler(range(len(dataset)), batch_size, drop_last)
        self.order = self.rng.permutation(len(dataset)) if shuffle else range(len(dataset))

    def __iter__(self):
        for indices in MyBatchSampler(self.order, self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[i] for i in indices])
        if self.shuffle:
            self.order = self.rng.permutation(len(self.dataset))

    def __len__(self):
        return len(self.batches)
'''),
    ],
    'balanced_weights': [
        ('goes through torch.as_tensor(labels).float() to accept lists, arrays and tensors alike: float32 cannot tell apart integer labels above 2**24 (e.g. IDs 20000000 and 20000001 merge into one class), although any integers are allowed', '''def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    values = torch.as_tensor(labels).float()
    _, inverse, counts = torch.unique(values, return_inverse=True, return_counts=True)
    return (1.0 / counts[inverse].double()).numpy()
'''),
        ('counts classes with collections.Counter(list(labels)): for a torch tensor the elements are 0-d tensors hashed by identity, so every sample is its own class and all weights are 1', '''def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    from collections import Counter
    labels = list(labels)
    counts = Counter(labels)
    return np.array([1.0 / counts[label] for label in labels], dtype=np.float64)
'''),
    ],
    'concat': [
        ("adds len(self) to a negative index but checks the range only for index >= len: an index below -len(d) wraps into the first part (via Python's negative indexing) instead of raising IndexError", '''import bisect


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
        n = len(self)
        if index < 0:
            index += n
        if index >= n:
            raise IndexError(f"index out of range for a dataset of length {n}")
        part = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[part - 1] if part > 0 else 0
        return self.datasets[part][index - start]
'''),
    ],
    'sharded': [
        ('shard returns the range object itself, which is iterable but not an iterator: next(ds.shard(w, k)) raises TypeError and __iter__ hands a non-iterator to the DataLoader', '''from torch.utils.data import IterableDataset, get_worker_info


class ShardedRange(IterableDataset):
    """The integers start, ..., end - 1, split across DataLoader workers."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def shard(self, worker_id, num_workers):
        """An iterator over worker `worker_id`'s part of the range."""
        return range(self.start + worker_id, self.end, num_workers)

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        return self.shard(info.id, info.num_workers)
'''),
    ],
}

RIGHT = {
    'sharded': [
        ('contiguous, balanced slices from np.array_split over the range instead of a stride; main process walks the range through shard(0, 1)', '''from torch.utils.data import IterableDataset, get_worker_info


class ShardedRange(IterableDataset):
    """The integers start, ..., end - 1, split across DataLoader workers."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def shard(self, worker_id, num_workers):
        """An iterator over worker `worker_id`'s part of the range."""
        n = max(self.end - self.start, 0)
        base, extra = divmod(n, num_workers)
        first = self.start + worker_id * base + min(worker_id, extra)
        size = base + (1 if worker_id < extra else 0)
        return iter(range(first, first + size))

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return self.shard(0, 1)
        return self.shard(info.id, info.num_workers)
'''),
    ],
    'concat': [
        ('walks the parts linearly (no bisect), normalising a negative index once with a single range test up front', '''import bisect


class MyConcatDataset:
    """Several map-style datasets read as one, one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise ValueError("MyConcatDataset needs at least one dataset")

    def __len__(self):
        return sum(len(d) for d in self.datasets)

    def __getitem__(self, index):
        total = len(self)
        if not -total <= index < total:
            raise IndexError(f"index {index} is out of range for length {total}")
        if index < 0:
            index = total + index
        for part in self.datasets:
            if index < len(part):
                return part[index]
            index -= len(part)
        raise IndexError(index)  # not reached
'''),
    ],
    'collate': [
        ('dispatches with functools.singledispatch-free match statement and collections.abc Mapping/Sequence, converting containers with zip(*samples)', '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    first = samples[0]
    match first:
        case torch.Tensor():
            return torch.stack(list(samples), dim=0)
        case np.ndarray():
            return np.stack(samples, axis=0)
        case bool() | int() | float() | np.generic():
            return np.array(samples)
        case dict():
            return {key: my_collate([sample[key] for sample in samples]) for key in first.keys()}
        case tuple():
            return tuple(map(my_collate, map(list, zip(*samples))))
        case list():
            return list(map(my_collate, map(list, zip(*samples))))
    raise TypeError(f"my_collate: unsupported sample type {type(first).__name__}")
'''),
    ],
}


# Wrong answers the checks still miss (strict expected failures in tests/blind/test_blind.py).
_PROMISE = (
    'a promise of the text that no case tests yet: found by blind round 8 (2026-11-28), to '
    'be caught with a case, a mutant and a property row'
)
_METHOD = (
    'how, not what: the same results on every input the checks give here; the text asks for '
    'a way of doing it that no case observes yet (blind round 8)'
)
_DEVICE = (
    'differs only on a GPU or with another number of devices, which the checks here do not '
    'have (blind round 8)'
)
SURVIVORS = {
    ('batch_sampler', 0): (
        'not a mistake the text defines: True is an int in Python, and the text does not '
        'say that bools are refused'
    ),
}
