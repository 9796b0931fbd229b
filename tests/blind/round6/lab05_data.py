"""Lab 05: answers written from the released notebook's text alone (blind corpus, round 6)."""

WRONG = {
    "batch_sampler": [
        ('__len__ is len(sampler) // batch_size + 1 without drop_last: one list too many when batch_size divides the number of indices (and 1 instead of 0 for an empty sampler)', '''class MyBatchSampler:
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
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        full = len(self.sampler) // self.batch_size
        return full if self.drop_last else full + 1
'''),
        ('reads the sampler once in __init__ (self.indices = list(sampler)) and batches that list every time: a new iteration replays the first pass instead of starting a new pass over the sampler (a reshuffling sampler never reshuffles)', '''class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`.

    Args:
        sampler: an iterable of indices that has a length.
        batch_size: indices per list, a positive integer.
        drop_last: drop a final list shorter than `batch_size`.
    """

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.indices = list(sampler)  # read the sampler once
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
            return len(self.indices) // self.batch_size
        return (len(self.indices) + self.batch_size - 1) // self.batch_size
'''),
    ],
    "collate": [
        ("Python numbers collated with torch.tensor(samples), as torch's default_collate does: ints/floats/bools become a torch tensor (float32 for floats) instead of a NumPy array", '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    first = samples[0]
    if isinstance(first, torch.Tensor):
        return torch.stack(samples)
    if isinstance(first, np.ndarray):
        return np.stack(samples)
    if isinstance(first, np.generic):
        return np.array(samples)
    if isinstance(first, (bool, int, float)):
        return torch.tensor(samples)  # labels end up as a tensor, ready for the loss
    if isinstance(first, dict):
        return {key: my_collate([sample[key] for sample in samples]) for key in first}
    if isinstance(first, tuple):
        return tuple(my_collate(list(column)) for column in zip(*samples))
    if isinstance(first, list):
        return [my_collate(list(column)) for column in zip(*samples)]
    raise TypeError(f"my_collate: cannot collate samples of type {type(first).__name__}")
'''),
        ('every sequence is rebuilt as a list ([... for column in zip(*samples)]): a tuple sample such as (image, label) gives a list batch instead of a tuple', '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    first = samples[0]
    if isinstance(first, torch.Tensor):
        return torch.stack(samples)
    if isinstance(first, np.ndarray):
        return np.stack(samples)
    if isinstance(first, (bool, int, float, np.generic)):
        return np.array(samples)
    if isinstance(first, dict):
        return {key: my_collate([sample[key] for sample in samples]) for key in first}
    if isinstance(first, (tuple, list)):
        return [my_collate(list(column)) for column in zip(*samples)]
    raise TypeError(f"my_collate: cannot collate samples of type {type(first).__name__}")
'''),
    ],
    "dataloader": [
        ('keeps one index array and shuffles it in place each epoch (self.rng.shuffle(self.order)) instead of drawing a fresh self.rng.permutation(n): epoch 1 agrees, later epochs shuffle the previous order and differ from the specified sequence', '''class MyDataLoader:
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
        self.batch_sampler = MyBatchSampler(range(len(dataset)), batch_size, drop_last)
        self.order = np.arange(len(dataset))

    def __iter__(self):
        if self.shuffle:
            self.rng.shuffle(self.order)  # a new order every epoch
        order = self.order
        for indices in MyBatchSampler(order, self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self):
        return len(self.batch_sampler)
'''),
        ('creates the generator anew from the seed at the start of every epoch (np.random.default_rng(self.seed) in __iter__): with a seed every epoch has the same order; without one, two loaders never agree with the one-generator sequence', '''class MyDataLoader:
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
            self.rng = np.random.default_rng(self.seed)
            order = self.rng.permutation(len(self.dataset))
        else:
            order = range(len(self.dataset))
        for indices in MyBatchSampler(order, self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self):
        return len(self.batch_sampler)
'''),
    ],
    "balanced_weights": [
        ('counts classes with np.bincount(labels): fine for non-negative labels, but negative class labels raise ValueError (labels may be any integers)', '''def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    labels = np.asarray(labels)
    counts = np.bincount(labels)          # samples per class value
    return 1.0 / counts[labels]
'''),
    ],
    "concat": [
        ('a negative index is converted with index += len(self) but never checked against -len(d): d[-len(d) - 1] stays negative and returns an item from the first part instead of raising IndexError', '''import bisect


class MyConcatDataset:
    """Several map-style datasets read as one, one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("MyConcatDataset needs at least one dataset")
        self.cumulative_sizes = []
        total = 0
        for dataset in self.datasets:
            total += len(dataset)
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
        ('negative indices are forwarded to the last part (self.datasets[-1][index]): d[-1] works when the last part is non-empty, but an empty last part or |index| > len(last part) is wrong (IndexError or an item of the wrong part)', '''import bisect


class MyConcatDataset:
    """Several map-style datasets read as one, one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("MyConcatDataset needs at least one dataset")
        self.cumulative_sizes = []
        total = 0
        for dataset in self.datasets:
            total += len(dataset)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        if index < 0:
            if -index > len(self):
                raise IndexError(f"index {index} out of range for length {len(self)}")
            return self.datasets[-1][index]  # counting from the end
        if index >= len(self):
            raise IndexError(f"index {index} out of range for length {len(self)}")
        part = bisect.bisect_right(self.cumulative_sizes, index)
        offset = self.cumulative_sizes[part - 1] if part > 0 else 0
        return self.datasets[part][index - offset]
'''),
    ],
    "sharded": [
        ("contiguous slices of ceil(n / num_workers) elements (the torch docs' recipe): every integer once, but shards are unbalanced, e.g. 10 over 4 workers gives 3, 3, 3, 1 and 5 over 4 gives 2, 2, 1, 0", '''import math

from torch.utils.data import IterableDataset, get_worker_info


class ShardedRange(IterableDataset):
    """The integers start, ..., end - 1, split across DataLoader workers."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def shard(self, worker_id, num_workers):
        """An iterator over worker `worker_id`'s part of the range."""
        per_worker = int(math.ceil((self.end - self.start) / float(num_workers)))
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
        ('cuts a fresh iterator of the sampler with itertools.islice in a while loop; __len__ from divmod', '''import itertools


class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`.

    Args:
        sampler: an iterable of indices that has a length.
        batch_size: indices per list, a positive integer.
        drop_last: drop a final list shorter than `batch_size`.
    """

    def __init__(self, sampler, batch_size, drop_last):
        if type(batch_size) is bool or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size should be a positive integer, got {batch_size!r}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        indices = iter(self.sampler)  # one new pass per iteration
        while True:
            batch = list(itertools.islice(indices, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self):
        full, rest = divmod(len(self.sampler), self.batch_size)
        return full + int(rest > 0 and not self.drop_last)
'''),
    ],
    "concat": [
        ('walks through the parts subtracting their lengths instead of bisect, one chained range check -len <= i < len', '''import bisect


class MyConcatDataset:
    """Several map-style datasets read as one, one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise ValueError("datasets should not be an empty iterable")
        self.cumulative_sizes = []
        for dataset in self.datasets:
            previous = self.cumulative_sizes[-1] if self.cumulative_sizes else 0
            self.cumulative_sizes.append(previous + len(dataset))

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        total = len(self)
        if not -total <= index < total:
            raise IndexError(f"index {index} is out of range for a dataset of length {total}")
        if index < 0:
            index += total
        for dataset in self.datasets:  # walk the parts; empty ones are passed over
            if index < len(dataset):
                return dataset[index]
            index -= len(dataset)
'''),
    ],
    "sharded": [
        ('balanced contiguous slices computed with divmod (first n % num_workers workers take one more) instead of interleaving', '''import math

from torch.utils.data import IterableDataset, get_worker_info


class ShardedRange(IterableDataset):
    """The integers start, ..., end - 1, split across DataLoader workers."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def shard(self, worker_id, num_workers):
        """An iterator over worker `worker_id`'s part of the range."""
        # Contiguous slices: the first `extra` workers take one element more.
        size, extra = divmod(max(self.end - self.start, 0), num_workers)
        lo = self.start + worker_id * size + min(worker_id, extra)
        hi = lo + size + (1 if worker_id < extra else 0)
        return iter(range(lo, hi))

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        return self.shard(info.id, info.num_workers)
'''),
    ],
}
