"""Lab 05: answers written from the released notebook's text alone (blind corpus, round 9)."""

WRONG = {
    'batch_sampler': [
        ("Validates batch_size only with `batch_size <= 0`, so a non-integer such as 2.5 is accepted (and then never fills a batch), breaking \"a batch_size that is not a positive integer raises ValueError\".", '''class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`.

    Args:
        sampler: an iterable of indices that has a length.
        batch_size: indices per list, a positive integer.
        drop_last: drop a final list shorter than `batch_size`.
    """

    def __init__(self, sampler, batch_size, drop_last):
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
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
        n = len(self.sampler)
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size
'''),
        ("__len__ counts a partial batch as `n // batch_size + 1` whenever drop_last is False, one too many when the indices divide evenly (and 1 for an empty sampler), breaking \"len() is the number of lists one pass yields\".", '''import numbers


class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`.

    Args:
        sampler: an iterable of indices that has a length.
        batch_size: indices per list, a positive integer.
        drop_last: drop a final list shorter than `batch_size`.
    """

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, numbers.Integral) or isinstance(batch_size, bool) or batch_size <= 0:
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
    ],
    'collate': [
        ("Rebuilds a tuple batch with `type(first)(generator)`, which works for tuple and list but raises TypeError for a namedtuple sample, breaking \"namedtuple samples ... their batch is a tuple (or the same namedtuple), each position collated\".", '''def my_collate(samples):
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
        return type(first)(my_collate(list(column)) for column in zip(*samples))
    raise TypeError(f"cannot collate {type(first).__name__}")
'''),
        ("Checks `isinstance(leaf, int)` first and forces dtype=np.int64, and since bool is a subclass of int a batch of Python bools comes back as int64 0/1, breaking \"bool -> bool\".", '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    first = samples[0]
    if isinstance(first, torch.Tensor):
        return torch.stack(samples)
    if isinstance(first, np.ndarray):
        return np.stack(samples)
    if isinstance(first, int):
        return np.array(samples, dtype=np.int64)   # int64 on every platform
    if isinstance(first, (float, np.generic)):
        return np.array(samples)
    if isinstance(first, dict):
        return {key: my_collate([s[key] for s in samples]) for key in first}
    if isinstance(first, tuple):
        return tuple(my_collate(list(column)) for column in zip(*samples))
    if isinstance(first, list):
        return [my_collate(list(column)) for column in zip(*samples)]
    raise TypeError(f"cannot collate {type(first).__name__}")
'''),
    ],
    'dataloader': [
        ("Creates the generator with `np.random.default_rng(seed) if seed else np.random.default_rng()`, so seed=0 is treated like no seed and two loaders with seed=0 shuffle differently, breaking \"the same seed gives the same order (seed=0 too)\".", '''class MyDataLoader:
    """Iterates over `dataset` in batches; see the exercise text for the exact order."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, seed=None,
                 collate_fn=None):
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.collate_fn = my_collate if collate_fn is None else collate_fn
        self.rng = np.random.default_rng(seed) if seed else np.random.default_rng()
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
        ("Draws the first permutation in __init__ and the next one only after an epoch has run to its end, so an epoch abandoned after its first batch leaves the order unchanged and the following epoch repeats it, breaking \"draw exactly one permutation at the start of every epoch\".", '''class MyDataLoader:
    """Iterates over `dataset` in batches; see the exercise text for the exact order."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, seed=None,
                 collate_fn=None):
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.collate_fn = collate_fn if collate_fn is not None else my_collate
        self.batches = MyBatchSampler(range(len(dataset)), batch_size, drop_last)
        self.rng = np.random.default_rng(seed)
        self.order = self.rng.permutation(len(dataset)) if shuffle else np.arange(len(dataset))

    def __iter__(self):
        for indices in MyBatchSampler(self.order, self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[i] for i in indices])
        if self.shuffle:
            self.order = self.rng.permutation(len(self.dataset))   # ready for the next epoch

    def __len__(self):
        return len(self.batches)
'''),
    ],
    'balanced_weights': [
        ("Counts classes with collections.Counter over the labels as given; on a torch tensor the elements are 0-d tensors hashed by identity, so no label is found again on the second pass (count 0, ZeroDivisionError), breaking \"labels may be ... a torch tensor\" (lists and NumPy arrays work).", '''from collections import Counter


def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    counts = Counter(labels)
    return np.array([1.0 / counts[label] for label in labels], dtype=np.float64)
'''),
    ],
    'concat': [
        ("Copies torch's `assert len(datasets) > 0`, so an empty list of datasets raises AssertionError (and nothing at all under python -O) instead of the ValueError the text asks for.", '''import bisect


class MyConcatDataset:
    """Several map-style datasets read as one, one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        assert len(self.datasets) > 0, "datasets should not be an empty iterable"
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
                raise IndexError("absolute value of index should not exceed dataset length")
            index += len(self)
        part = bisect.bisect_right(self.cumulative_sizes, index)
        if part == len(self.datasets):
            raise IndexError(f"index {index} out of range")
        start = self.cumulative_sizes[part - 1] if part > 0 else 0
        return self.datasets[part][index - start]
'''),
        ("Adds len(d) to a negative index without checking the range first, so d[-len(d) - 1] becomes -1, lands in the first part and Python's own negative indexing returns that part's last item instead of raising IndexError.", '''import bisect


class MyConcatDataset:
    """Several map-style datasets read as one, one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("MyConcatDataset needs at least one dataset")
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
            raise IndexError(f"index {index} out of range for {len(self)} items")
        part = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[part - 1] if part > 0 else 0
        return self.datasets[part][index - start]
'''),
    ],
    'sharded': [
        ("Gives every worker len // num_workers contiguous items and the whole remainder to the last worker, so range(0, 10) over 4 workers splits 2, 2, 2, 4, breaking \"no part is more than one element longer than another\".", '''from torch.utils.data import IterableDataset, get_worker_info


class ShardedRange(IterableDataset):
    """The integers start, ..., end - 1, split across DataLoader workers."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def shard(self, worker_id, num_workers):
        """An iterator over worker `worker_id`'s part of the range."""
        per_worker = (self.end - self.start) // num_workers
        lo = self.start + worker_id * per_worker
        hi = self.end if worker_id == num_workers - 1 else lo + per_worker
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
    'batch_sampler': [
        ("Cuts batches with itertools.islice from one iterator per pass and accepts any numbers.Integral (NumPy integers too) as batch_size, computing len with ceiling division by negation.", '''import itertools
import numbers


class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`.

    Args:
        sampler: an iterable of indices that has a length.
        batch_size: indices per list, a positive integer.
        drop_last: drop a final list shorter than `batch_size`.
    """

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or batch_size < 1:
            raise ValueError(f"batch_size should be a positive integer, got {batch_size!r}")
        self.sampler, self.batch_size, self.drop_last = sampler, int(batch_size), drop_last

    def __iter__(self):
        it = iter(self.sampler)
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
'''),
    ],
    'concat': [
        ("Finds the part by walking through the parts and subtracting their lengths (no bisect, no stored running totals), after normalising and range-checking the index.", '''import bisect


class MyConcatDataset:
    """Several map-style datasets read as one, one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise ValueError("expected at least one dataset")

    def __len__(self):
        return sum(len(d) for d in self.datasets)

    def __getitem__(self, index):
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"index {index} out of range for length {n}")
        if index < 0:
            index = n + index
        for d in self.datasets:
            if index < len(d):
                return d[index]
            index -= len(d)
        raise IndexError(index)  # not reached
'''),
    ],
    'sharded': [
        ("Uses balanced contiguous slices (the first `remainder` workers get one extra item, via divmod) instead of every num_workers-th element.", '''from torch.utils.data import IterableDataset, get_worker_info


class ShardedRange(IterableDataset):
    """The integers start, ..., end - 1, split across DataLoader workers."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def shard(self, worker_id, num_workers):
        """An iterator over worker `worker_id`'s part of the range."""
        size, extra = divmod(max(self.end - self.start, 0), num_workers)
        lo = self.start + worker_id * size + min(worker_id, extra)
        hi = lo + size + (1 if worker_id < extra else 0)
        return iter(range(lo, hi))

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return self.shard(0, 1)
        return self.shard(info.id, info.num_workers)
'''),
    ],
}
