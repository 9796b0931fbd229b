"""Lab 05: answers written from the released notebook's text alone (blind corpus, round 7)."""

WRONG = {
    'batch_sampler': [
        ('validates with `batch_size < 1` only, so a float such as 2.0 (or 2.5) is accepted instead of rejected (breaks: a batch_size that is not a positive integer raises ValueError)', '''class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`.

    Args:
        sampler: an iterable of indices that has a length.
        batch_size: indices per list, a positive integer.
        drop_last: drop a final list shorter than `batch_size`.
    """

    def __init__(self, sampler, batch_size, drop_last):
        if batch_size < 1:
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
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
'''),
        ('copies the sampler into a list once in __init__, so every pass replays the first order: a random sampler is not re-drawn and later changes to the sampler are ignored (breaks: iterating again starts a new pass over the sampler)', '''class MyBatchSampler:
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
        self.indices = list(sampler)
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for index in self.indices:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
'''),
    ],
    'collate': [
        ('follows the table with explicit dtypes, int64 for int tested before bool: Python bools are ints, so a bool leaf becomes an int64 array (breaks: bool -> bool)', '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    first = samples[0]
    if isinstance(first, torch.Tensor):
        return torch.stack(samples)
    if isinstance(first, np.ndarray):
        return np.stack(samples)
    if isinstance(first, int):
        return np.array(samples, dtype=np.int64)
    if isinstance(first, float):
        return np.array(samples, dtype=np.float64)
    if isinstance(first, (bool, np.generic)):
        return np.array(samples)
    if isinstance(first, dict):
        return {key: my_collate([s[key] for s in samples]) for key in first}
    if isinstance(first, tuple):
        return tuple(my_collate(list(group)) for group in zip(*samples))
    if isinstance(first, list):
        return [my_collate(list(group)) for group in zip(*samples)]
    raise TypeError(f"cannot collate {type(first).__name__}")
'''),
        ("treats tuples and lists alike, as torch's default_collate used to, and returns a list for a tuple sample such as (image, label) (breaks: tuple -> tuple)", '''def my_collate(samples):
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
        return [my_collate(list(group)) for group in zip(*samples)]
    raise TypeError(f"cannot collate {type(first).__name__}")
'''),
    ],
    'dataloader': [
        ('creates np.random.default_rng(seed) inside __iter__, so with a seed every epoch redraws the same permutation (breaks: one generator made when the loader is built; epochs differ from each other)', '''class MyDataLoader:
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
        self.seed = seed
        self.drop_last = drop_last
        self.rng = np.random.default_rng(seed)
        self.collate_fn = my_collate if collate_fn is None else collate_fn
        self._batches = MyBatchSampler(range(len(dataset)), batch_size, drop_last)

    def __iter__(self):
        if self.shuffle:
            self.rng = np.random.default_rng(self.seed)
            order = self.rng.permutation(len(self.dataset))
        else:
            order = range(len(self.dataset))
        for indices in MyBatchSampler(order, self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self):
        return len(self._batches)
'''),
        ("validates batch_size in __init__ by building a MyBatchSampler over rng.permutation(...), which spends one draw of the generator: every epoch's order is then one permutation late compared with the same seed (breaks: draw exactly one permutation at the start of every epoch)", '''class MyDataLoader:
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
        self.collate_fn = my_collate if collate_fn is None else collate_fn
        first_order = self.rng.permutation(len(dataset)) if shuffle else range(len(dataset))
        self._batches = MyBatchSampler(first_order, batch_size, drop_last)

    def __iter__(self):
        if self.shuffle:
            order = self.rng.permutation(len(self.dataset))
        else:
            order = range(len(self.dataset))
        for indices in MyBatchSampler(order, self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self):
        return len(self._batches)
'''),
    ],
    'balanced_weights': [
        ('counts classes with np.bincount(labels), which assumes labels 0..C-1: negative labels raise and huge labels allocate a giant array (breaks: labels may be any integers)', '''def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    labels = np.asarray(labels)
    counts = np.bincount(labels)
    return 1.0 / counts[labels].astype(np.float64)
'''),
    ],
    'concat': [
        ('adds len(d) to a negative index before the range check only catches the top end, so d[-len(d) - 1] wraps to -1 and returns an item of the first part instead of raising (breaks: an index outside -len(d)..len(d)-1 raises IndexError)', '''import bisect


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
            raise IndexError("index out of range")
        part = bisect.bisect_right(self.cumulative_sizes, index)
        offset = index if part == 0 else index - self.cumulative_sizes[part - 1]
        return self.datasets[part][offset]
'''),
    ],
    'sharded': [
        ("contiguous slices of size ceil(n / num_workers), as in torch's docs example: 10 integers over 4 workers give 3, 3, 3, 1 (breaks: no part more than one element longer than another)", '''import math

from torch.utils.data import IterableDataset, get_worker_info


class ShardedRange(IterableDataset):
    """The integers start, ..., end - 1, split across DataLoader workers."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def shard(self, worker_id, num_workers):
        """An iterator over worker `worker_id`'s part of the range."""
        per_worker = math.ceil((self.end - self.start) / num_workers)
        lo = self.start + worker_id * per_worker
        return iter(range(lo, min(lo + per_worker, self.end)))

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        return self.shard(info.id, info.num_workers)
'''),
        ('strides from worker_id rather than start + worker_id: correct for ranges starting at 0, but ShardedRange(5, 15) also yields 0..4 (breaks: the parts contain every integer of start..end-1 exactly once)', '''from torch.utils.data import IterableDataset, get_worker_info


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
    'collate': [
        ("structural pattern matching (match/case on the first sample's type) with bool/int/float/NumPy scalars in one case, instead of an isinstance chain", '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    match samples[0]:
        case torch.Tensor():
            return torch.stack(list(samples), dim=0)
        case np.ndarray():
            return np.stack(samples, axis=0)
        case bool() | int() | float() | np.generic():
            return np.array(samples)
        case dict() as first:
            return {key: my_collate([sample[key] for sample in samples]) for key in first}
        case tuple():
            return tuple(my_collate([sample[k] for sample in samples]) for k in range(len(samples[0])))
        case list():
            return [my_collate([sample[k] for sample in samples]) for k in range(len(samples[0]))]
        case other:
            raise TypeError(f"my_collate: cannot batch {type(other).__name__}")
'''),
    ],
    'concat': [
        ('walks the parts linearly (no bisect, no cumulative table) and normalises the index with operator.index and one explicit range test', '''import bisect
import operator


class MyConcatDataset:
    """Several map-style datasets read as one, one after the other."""

    def __init__(self, datasets):
        self.parts = list(datasets)
        if len(self.parts) == 0:
            raise ValueError("MyConcatDataset needs at least one dataset")

    def __len__(self):
        return sum(len(part) for part in self.parts)

    def __getitem__(self, index):
        index = operator.index(index)
        total = len(self)
        if not -total <= index < total:
            raise IndexError(f"index {index} out of range for a dataset of length {total}")
        if index < 0:
            index += total
        for part in self.parts:
            if index < len(part):
                return part[index]
            index -= len(part)
        raise IndexError(index)  # not reached
'''),
    ],
    'sharded': [
        ('balanced contiguous slices from divmod (the first n % W workers take one more), cut with itertools.islice, instead of a strided range', '''import itertools

from torch.utils.data import IterableDataset, get_worker_info


class ShardedRange(IterableDataset):
    """The integers start, ..., end - 1, split across DataLoader workers."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def shard(self, worker_id, num_workers):
        """An iterator over worker `worker_id`'s part of the range."""
        n = max(self.end - self.start, 0)
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
