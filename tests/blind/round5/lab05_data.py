"""Lab 05: answers written from the released notebook's text alone (blind corpus, round 5)."""


def _sub(src, old, new):
    assert src.count(old) == 1, old
    return src.replace(old, new)


_BS = '''class MyBatchSampler:
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
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
'''

_COLLATE = '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    elem = samples[0]
    if isinstance(elem, torch.Tensor):
        return torch.stack(samples)
    if isinstance(elem, np.ndarray):
        return np.stack(samples)
    if isinstance(elem, (bool, np.bool_)):
        return np.array(samples, dtype=bool)
    if isinstance(elem, (int, float, np.generic)):
        return np.array(samples)
    if isinstance(elem, dict):
        return {key: my_collate([s[key] for s in samples]) for key in elem}
    if isinstance(elem, tuple):
        return tuple(my_collate(list(group)) for group in zip(*samples))
    if isinstance(elem, list):
        return [my_collate(list(group)) for group in zip(*samples)]
    raise TypeError(f"cannot collate {type(elem).__name__}")
'''

_DL = '''class MyDataLoader:
    """Iterates over `dataset` in batches; see the exercise text for the exact order."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, seed=None,
                 collate_fn=None):
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.collate_fn = my_collate if collate_fn is None else collate_fn
        self.rng = np.random.default_rng(seed)
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
'''

_CONCAT = '''import bisect


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
            if -index > n:
                raise IndexError("index out of range")
            index += n
        if index >= n:
            raise IndexError("index out of range")
        part = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[part - 1] if part > 0 else 0
        return self.datasets[part][index - start]
'''

_SHARD = '''from torch.utils.data import IterableDataset, get_worker_info


class ShardedRange(IterableDataset):
    """The integers start, ..., end - 1, split across DataLoader workers."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def shard(self, worker_id, num_workers):
        """An iterator over worker `worker_id`'s part of the range."""
        return iter(range(self.start + worker_id, self.end, num_workers))

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.start, self.end))
        return self.shard(info.id, info.num_workers)
'''

_BW = '''def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    labels = np.asarray(labels)
    _, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    return 1.0 / counts[inverse.reshape(-1)].astype(np.float64)
'''

WRONG = {
    "batch_sampler": [
        ("reuses one list, emptied with batch.clear() after each yield: every batch is the same list object, so list(sampler) holds copies of the last (cleared) batch",
         _sub(_BS, '''                yield batch
                batch = []''', '''                yield batch
                batch.clear()''')),
        ("__len__ ignores drop_last (always rounds up): one too many when drop_last=True and the size does not divide",
         _sub(_BS, '''        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return''', '''        return''')),
    ],
    "collate": [
        ("ints are collated as np.array(..., dtype=np.int64) and the int test comes before the bool test: Python bools (a subclass of int) become int64 instead of bool",
         '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    elem = samples[0]
    if isinstance(elem, torch.Tensor):
        return torch.stack(samples)
    if isinstance(elem, np.ndarray):
        return np.stack(samples)
    if isinstance(elem, int):
        return np.array(samples, dtype=np.int64)
    if isinstance(elem, (bool, np.bool_)):
        return np.array(samples, dtype=bool)
    if isinstance(elem, (float, np.generic)):
        return np.array(samples)
    if isinstance(elem, dict):
        return {key: my_collate([s[key] for s in samples]) for key in elem}
    if isinstance(elem, (tuple, list)):
        return type(elem)(my_collate(list(group)) for group in zip(*samples))
    raise TypeError(f"cannot collate {type(elem).__name__}")
'''),
        ("tuples and lists handled in one branch that always builds a list: a (image, label) tuple sample gives a list batch",
         _sub(_COLLATE, '''    if isinstance(elem, tuple):
        return tuple(my_collate(list(group)) for group in zip(*samples))
    if isinstance(elem, list):
        return''', '''    if isinstance(elem, (tuple, list)):
        return''')),
    ],
    "dataloader": [
        ("makes the generator np.random.default_rng(self.seed) inside __iter__: every epoch draws the same permutation (epochs do not differ)",
         _sub(_sub(_DL, '''        self.rng = np.random.default_rng(seed)''', '''        self.seed = seed'''),
              '''            order = self.rng.permutation(len(self.dataset))''',
              '''            self.rng = np.random.default_rng(self.seed)
            order = self.rng.permutation(len(self.dataset))''')),
        ("drop_last is validated in __init__ but the epoch's MyBatchSampler is built with drop_last=False: the short last batch is still yielded (len is right)",
         _sub(_DL, '''MyBatchSampler(order, self.batch_size, self.drop_last)''', '''MyBatchSampler(order, self.batch_size, False)''')),
    ],
    "balanced_weights": [
        ("counts with np.bincount(labels)[labels]: fine for labels 0..C-1 and other non-negative ints, but raises for negative class labels (the text allows any integers)",
         '''def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    labels = np.asarray(labels).astype(np.int64)
    counts = np.bincount(labels)
    return 1.0 / counts[labels]
'''),
    ],
    "concat": [
        ("negative index: adds len(d) without checking the result: d[-len(d)-1] returns an item (index -1 of the first part) instead of raising IndexError",
         _sub(_CONCAT, '''        if index < 0:
            if -index > n:
                raise IndexError("index out of range")
            index += n''', '''        if index < 0:
            index += n''')),
        ("bisect_left on the running totals: an index equal to a part's start goes to the part before (IndexError or, after an empty part, the wrong part)",
         _sub(_CONCAT, "bisect.bisect_right(self.cumulative_sizes, index)", "bisect.bisect_left(self.cumulative_sizes, index)")),
    ],
    "sharded": [
        ("contiguous slices of size n // num_workers with the last worker taking the rest: when n does not divide, the last shard is up to num_workers-1 elements longer",
         _sub(_SHARD, '''        return iter(range(self.start + worker_id, self.end, num_workers))''', '''        size = (self.end - self.start) // num_workers
        lo = self.start + worker_id * size
        hi = self.end if worker_id == num_workers - 1 else lo + size
        return iter(range(lo, hi))''')),
    ],
}

RIGHT = {
    "batch_sampler": [
        ("iterator + itertools.islice chunks, validation with operator.index, len by divmod",
         '''import itertools
import operator


class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`."""

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool):
            raise ValueError("batch_size must be a positive integer")
        try:
            size = operator.index(batch_size)
        except TypeError:
            raise ValueError("batch_size must be a positive integer") from None
        if size <= 0:
            raise ValueError("batch_size must be a positive integer")
        self.sampler, self.batch_size, self.drop_last = sampler, size, drop_last

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
        return full + (1 if rest and not self.drop_last else 0)
'''),
    ],
    "balanced_weights": [
        ("plain Python Counter over the labels (tensor, list or array turned into ints), weights 1/count as float64",
         '''def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    from collections import Counter
    if isinstance(labels, torch.Tensor):
        labels = labels.tolist()
    values = [int(v) for v in np.asarray(labels).reshape(-1)]
    counts = Counter(values)
    return np.array([1.0 / counts[v] for v in values], dtype=np.float64)
'''),
    ],
    "sharded": [
        ("balanced contiguous slices by divmod (the first `rest` workers take one extra) instead of striding",
         _sub(_SHARD, '''        return iter(range(self.start + worker_id, self.end, num_workers))''', '''        n = max(self.end - self.start, 0)
        size, rest = divmod(n, num_workers)
        lo = self.start + worker_id * size + min(worker_id, rest)
        hi = lo + size + (1 if worker_id < rest else 0)
        return iter(range(lo, hi))''')),
    ],
}
