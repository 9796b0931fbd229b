"""Realistic wrong answers for lab05_data: each must lose points in its checks cell."""

_BATCH_SAMPLER_HEAD = '''class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`."""

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer, got {batch_size!r}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last
'''

_BATCH_SAMPLER_ITER = '''
    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch
'''

_BATCH_SAMPLER_LEN = '''
    def __len__(self):
        n = len(self.sampler)
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size
'''

_LOADER_HEAD = '''class MyDataLoader:
    """Iterates over `dataset` in batches."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, seed=None,
                 collate_fn=None):
        MyBatchSampler(range(0), batch_size, drop_last)
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.collate_fn = my_collate if collate_fn is None else collate_fn
'''

_LOADER_LEN = '''
    def __len__(self):
        return len(MyBatchSampler(range(len(self.dataset)), self.batch_size, self.drop_last))
'''

_CONCAT_INIT = '''import bisect


class MyConcatDataset:
    """Several map-style datasets read as one, one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("MyConcatDataset needs at least one dataset, got none")
        self.cumulative_sizes = []
        total = 0
        for part in self.datasets:
            total += len(part)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]
'''

_SHARDED_HEAD = '''from torch.utils.data import IterableDataset, get_worker_info


class ShardedRange(IterableDataset):
    """The integers start, ..., end - 1, split across DataLoader workers."""

    def __init__(self, start, end):
        self.start, self.end = start, end
'''

_SHARDED_ITER = '''
    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return self.shard(0, 1)
        return self.shard(info.id, info.num_workers)
'''

MUTANTS = {
    "batch_sampler": [
        ("one list object for every batch: filled, yielded, then cleared", _BATCH_SAMPLER_HEAD + '''
    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch.clear()
        if batch and not self.drop_last:
            yield batch
''' + _BATCH_SAMPLER_LEN),
        ("one reused list, copied only when len() came first (as list(sampler) calls it)",
         _BATCH_SAMPLER_HEAD + '''
    def __iter__(self):
        copy, self.len_called = getattr(self, "len_called", False), False
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield list(batch) if copy else batch
                batch.clear()
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        self.len_called = True
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size
'''),
        ("len() counts a pass of the sampler (len(list(self.sampler))): a shuffling sampler "
         "moves on to its next order", _BATCH_SAMPLER_HEAD + _BATCH_SAMPLER_ITER
         + _BATCH_SAMPLER_LEN.replace("n = len(self.sampler)", "n = len(list(self.sampler))")),
        ("reads the sampler once, in __init__: every pass repeats the first pass's order",
         _BATCH_SAMPLER_HEAD.replace("self.sampler = sampler", "self.sampler = list(sampler)")
         + _BATCH_SAMPLER_ITER + _BATCH_SAMPLER_LEN),
        ("always drops the last partial batch, whatever drop_last says", _BATCH_SAMPLER_HEAD + '''
    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
''' + _BATCH_SAMPLER_LEN),
        ("never drops the last partial batch (drop_last ignored in __iter__ and __len__)",
         _BATCH_SAMPLER_HEAD + '''
    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch:
            yield batch

    def __len__(self):
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
'''),
        ("len rounds down even without drop_last", _BATCH_SAMPLER_HEAD + _BATCH_SAMPLER_ITER + '''
    def __len__(self):
        return len(self.sampler) // self.batch_size
'''),
        ("len is n // batch_size + 1: one too many when the batches divide evenly",
         _BATCH_SAMPLER_HEAD + _BATCH_SAMPLER_ITER + '''
    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else n // self.batch_size + 1
'''),
        ("keeps one iterator made in __init__: the second pass is empty", '''class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`."""

    def __init__(self, sampler, batch_size, drop_last):
        if batch_size <= 0:
            raise ValueError("batch_size must be positive")
        self.indices = iter(sampler)
        self.n = len(sampler)
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
        return self.n // self.batch_size if self.drop_last else -(-self.n // self.batch_size)
'''),
        ("slices sorted indices instead of following the sampler's order", _BATCH_SAMPLER_HEAD + '''
    def __iter__(self):
        indices = sorted(self.sampler)
        stop = len(indices) - len(indices) % self.batch_size if self.drop_last else len(indices)
        for k in range(0, stop, self.batch_size):
            yield indices[k:k + self.batch_size]
''' + _BATCH_SAMPLER_LEN),
    ],
    "collate": [
        ("turns torch tensors into NumPy (breaks the device and the kind)", '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    first = samples[0]
    if isinstance(first, torch.Tensor):
        return np.stack([s.cpu().numpy() for s in samples])
    if isinstance(first, np.ndarray):
        return np.stack(samples)
    if isinstance(first, (bool, int, float, np.generic)):
        return np.array(samples)
    if isinstance(first, dict):
        return {key: my_collate([sample[key] for sample in samples]) for key in first}
    if isinstance(first, (tuple, list)):
        columns = [my_collate(list(column)) for column in zip(*samples)]
        return tuple(columns) if isinstance(first, tuple) else columns
    raise TypeError(type(first).__name__)
'''),
        ("tuples and lists rebuilt with type(first)(generator): a namedtuple sample raises "
         "TypeError", '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    first = samples[0]
    if isinstance(first, torch.Tensor):
        return torch.stack(list(samples))
    if isinstance(first, np.ndarray):
        return np.stack(samples)
    if isinstance(first, (bool, int, float, np.generic)):
        return np.array(samples)
    if isinstance(first, dict):
        return {key: my_collate([sample[key] for sample in samples]) for key in first}
    if isinstance(first, (tuple, list)):
        return type(first)(my_collate(list(column)) for column in zip(*samples))
    raise TypeError(type(first).__name__)
'''),
        ("returns a list for tuple samples (PyTorch's habit, not the spec)", '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    first = samples[0]
    if isinstance(first, torch.Tensor):
        return torch.stack(list(samples))
    if isinstance(first, np.ndarray):
        return np.stack(samples)
    if isinstance(first, (bool, int, float, np.generic)):
        return np.array(samples)
    if isinstance(first, dict):
        return {key: my_collate([sample[key] for sample in samples]) for key in first}
    if isinstance(first, (tuple, list)):
        return [my_collate(list(column)) for column in zip(*samples)]
    raise TypeError(type(first).__name__)
'''),
        ("leaves numbers as a Python list instead of an array", '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    first = samples[0]
    if isinstance(first, torch.Tensor):
        return torch.stack(list(samples))
    if isinstance(first, np.ndarray):
        return np.stack(samples)
    if isinstance(first, (bool, int, float, np.generic)):
        return list(samples)
    if isinstance(first, dict):
        return {key: my_collate([sample[key] for sample in samples]) for key in first}
    if isinstance(first, (tuple, list)):
        columns = [my_collate(list(column)) for column in zip(*samples)]
        return tuple(columns) if isinstance(first, tuple) else columns
    raise TypeError(type(first).__name__)
'''),
        ("builds torch batches with torch.tensor(...) on the CPU", '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    first = samples[0]
    if isinstance(first, torch.Tensor):
        return torch.tensor(np.stack([s.detach().cpu().numpy() for s in samples]))
    if isinstance(first, np.ndarray):
        return np.stack(samples)
    if isinstance(first, (bool, int, float, np.generic)):
        return np.array(samples)
    if isinstance(first, dict):
        return {key: my_collate([sample[key] for sample in samples]) for key in first}
    if isinstance(first, (tuple, list)):
        columns = [my_collate(list(column)) for column in zip(*samples)]
        return tuple(columns) if isinstance(first, tuple) else columns
    raise TypeError(type(first).__name__)
'''),
        ("does not recurse into dicts: each key gets a plain list of values", '''def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    first = samples[0]
    if isinstance(first, torch.Tensor):
        return torch.stack(list(samples))
    if isinstance(first, np.ndarray):
        return np.stack(samples)
    if isinstance(first, (bool, int, float, np.generic)):
        return np.array(samples)
    if isinstance(first, dict):
        return {key: [sample[key] for sample in samples] for key in first}
    if isinstance(first, (tuple, list)):
        columns = [my_collate(list(column)) for column in zip(*samples)]
        return tuple(columns) if isinstance(first, tuple) else columns
    raise TypeError(type(first).__name__)
'''),
    ],
    "dataloader": [
        ("seed=0 taken as no seed (default_rng(seed or None))", _LOADER_HEAD.replace(
            "np.random.default_rng(seed)", "np.random.default_rng(seed or None)") + '''
    def __iter__(self):
        n = len(self.dataset)
        order = self.rng.permutation(n).tolist() if self.shuffle else list(range(n))
        for indices in MyBatchSampler(order, self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[i] for i in indices])
''' + _LOADER_LEN),
        ("draws the next epoch's order when an epoch ends: after a break the order repeats",
         _LOADER_HEAD + '''        n = len(dataset)
        self.order = self.rng.permutation(n).tolist() if shuffle else list(range(n))

    def __iter__(self):
        for indices in MyBatchSampler(self.order, self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[i] for i in indices])
        if self.shuffle:
            self.order = self.rng.permutation(len(self.dataset)).tolist()
''' + _LOADER_LEN),
        ("reseeds in every epoch: all epochs have the same order", _LOADER_HEAD + '''
    def __iter__(self):
        n = len(self.dataset)
        rng = np.random.default_rng(self.seed)
        order = rng.permutation(n).tolist() if self.shuffle else list(range(n))
        for indices in MyBatchSampler(order, self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[i] for i in indices])
''' + _LOADER_LEN),
        ("shuffles once in __init__ and reuses that order every epoch", _LOADER_HEAD + '''
        n = len(dataset)
        self.order = self.rng.permutation(n).tolist() if shuffle else list(range(n))

    def __iter__(self):
        for indices in MyBatchSampler(self.order, self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[i] for i in indices])
''' + _LOADER_LEN),
        ("forgets drop_last when cutting the batches", _LOADER_HEAD + '''
    def __iter__(self):
        n = len(self.dataset)
        order = self.rng.permutation(n).tolist() if self.shuffle else list(range(n))
        for indices in MyBatchSampler(order, self.batch_size, False):
            yield self.collate_fn([self.dataset[i] for i in indices])
''' + _LOADER_LEN),
        ("shuffles with NumPy's global generator, ignoring the seed", _LOADER_HEAD + '''
    def __iter__(self):
        n = len(self.dataset)
        order = np.random.permutation(n).tolist() if self.shuffle else list(range(n))
        for indices in MyBatchSampler(order, self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[i] for i in indices])
''' + _LOADER_LEN),
        ("ignores a custom collate_fn", _LOADER_HEAD + '''
    def __iter__(self):
        n = len(self.dataset)
        order = self.rng.permutation(n).tolist() if self.shuffle else list(range(n))
        for indices in MyBatchSampler(order, self.batch_size, self.drop_last):
            yield my_collate([self.dataset[i] for i in indices])
''' + _LOADER_LEN),
        ("len counts full batches only", _LOADER_HEAD + '''
    def __iter__(self):
        n = len(self.dataset)
        order = self.rng.permutation(n).tolist() if self.shuffle else list(range(n))
        for indices in MyBatchSampler(order, self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self):
        return len(self.dataset) // self.batch_size
'''),
        ("draws a permutation in __init__ too, so every epoch is one draw late", _LOADER_HEAD + '''
        self.order = self.rng.permutation(len(dataset)).tolist()

    def __iter__(self):
        n = len(self.dataset)
        order = self.rng.permutation(n).tolist() if self.shuffle else list(range(n))
        for indices in MyBatchSampler(order, self.batch_size, self.drop_last):
            yield self.collate_fn([self.dataset[i] for i in indices])
''' + _LOADER_LEN),
    ],
    "balanced_weights": [
        ("labels through float32 (torch.as_tensor(labels).float()): 2**24 and 2**24 + 1 merge",
         '''def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    labels = torch.as_tensor(np.asarray(labels)).float().numpy().reshape(-1)
    _, class_of_sample, counts = np.unique(labels, return_inverse=True, return_counts=True)
    return 1.0 / counts[class_of_sample]
'''),
        ("weights by class frequency instead of its inverse", '''def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    labels = np.asarray(labels).reshape(-1)
    _, class_of_sample, counts = np.unique(labels, return_inverse=True, return_counts=True)
    return counts[class_of_sample] / len(labels)
'''),
        ("np.bincount(labels)[labels]: fails for labels that are not 0..C-1", '''def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    labels = np.asarray(labels).reshape(-1)
    return 1.0 / np.bincount(labels)[labels]
'''),
        ("'smoothed' weights 1/sqrt(count): still imbalanced", '''def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    labels = np.asarray(labels).reshape(-1)
    _, class_of_sample, counts = np.unique(labels, return_inverse=True, return_counts=True)
    return 1.0 / np.sqrt(counts[class_of_sample])
'''),
        ("uniform weights 1/N", '''def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    labels = np.asarray(labels).reshape(-1)
    return np.full(len(labels), 1.0 / len(labels))
'''),
        ("torch labels get torch.unique: a torch tensor of weights, not a NumPy array", '''def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    if isinstance(labels, torch.Tensor):
        _, class_of_sample, counts = torch.unique(labels, return_inverse=True, return_counts=True)
        return 1.0 / counts[class_of_sample]
    labels = np.asarray(labels).reshape(-1)
    _, class_of_sample, counts = np.unique(labels, return_inverse=True, return_counts=True)
    return 1.0 / counts[class_of_sample]
'''),
        ("one weight per class instead of one per sample", '''def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    labels = np.asarray(labels).reshape(-1)
    _, counts = np.unique(labels, return_counts=True)
    return 1.0 / counts
'''),
    ],
    "concat": [
        ("negative indices go to the first dataset's end", _CONCAT_INIT + '''
    def __getitem__(self, index):
        if index >= len(self):
            raise IndexError(f"index {index} is out of range")
        part = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[part - 1] if part > 0 else 0
        return self.datasets[part][index - start]
'''),
        ("bisect_left: the first item of each part comes from the previous part", _CONCAT_INIT + '''
    def __getitem__(self, index):
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of range for {n} samples")
        if index < 0:
            index += n
        part = bisect.bisect_left(self.cumulative_sizes, index)
        start = self.cumulative_sizes[part - 1] if part > 0 else 0
        return self.datasets[part][index - start]
'''),
        ("linear scan with <= (off by one at every boundary)", _CONCAT_INIT + '''
    def __getitem__(self, index):
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of range for {n} samples")
        if index < 0:
            index += n
        for part in self.datasets:
            if index <= len(part):
                return part[index]
            index -= len(part)
'''),
        ("no range check: -len-1 wraps into the first dataset", _CONCAT_INIT + '''
    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        for part in self.datasets:
            if index < len(part):
                return part[index]
            index -= len(part)
        raise IndexError(f"index {index} is out of range")
'''),
        ("accepts an empty list of datasets", '''import bisect


class MyConcatDataset:
    """Several map-style datasets read as one, one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        self.cumulative_sizes = list(np.cumsum([len(d) for d in self.datasets]))

    def __len__(self):
        return int(self.cumulative_sizes[-1]) if self.cumulative_sizes else 0

    def __getitem__(self, index):
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of range for {n} samples")
        if index < 0:
            index += n
        part = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[part - 1] if part > 0 else 0
        return self.datasets[part][index - start]
'''),
    ],
    "sharded": [
        ("an empty range is refused with ValueError", _SHARDED_HEAD + '''
    def shard(self, worker_id, num_workers):
        if self.end <= self.start:
            raise ValueError(f"range({self.start}, {self.end}) is empty")
        return iter(range(self.start + worker_id, self.end, num_workers))

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return self.shard(0, 1)
        return self.shard(info.id, info.num_workers)
'''),
        ("shards for two workers, whatever num_workers is", _SHARDED_HEAD + '''
    def shard(self, worker_id, num_workers):
        return iter(range(self.start + worker_id, self.end, num_workers))

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return self.shard(0, 1)
        return self.shard(info.id, 2)
'''),
        ("__iter__ hands out one stored iterator: a second pass is empty", _SHARDED_HEAD + '''
    def shard(self, worker_id, num_workers):
        return iter(range(self.start + worker_id, self.end, num_workers))

    def __iter__(self):
        if not hasattr(self, "_it"):
            info = get_worker_info()
            self._it = self.shard(0, 1) if info is None else self.shard(info.id, info.num_workers)
        return self._it
'''),
        ("every worker yields the whole range", _SHARDED_HEAD + '''
    def shard(self, worker_id, num_workers):
        return iter(range(self.start, self.end))
''' + _SHARDED_ITER),
        ("contiguous slices of n // W: the remainder is dropped", _SHARDED_HEAD + '''
    def shard(self, worker_id, num_workers):
        per_worker = (self.end - self.start) // num_workers
        first = self.start + worker_id * per_worker
        return iter(range(first, first + per_worker))
''' + _SHARDED_ITER),
        ("contiguous slices of ceil(n / W): the last worker gets far fewer", _SHARDED_HEAD + '''
    def shard(self, worker_id, num_workers):
        per_worker = -(-(self.end - self.start) // num_workers)
        first = self.start + worker_id * per_worker
        return iter(range(first, min(first + per_worker, self.end)))
''' + _SHARDED_ITER),
        ("strides from start + worker_id * num_workers", _SHARDED_HEAD + '''
    def shard(self, worker_id, num_workers):
        return iter(range(self.start + worker_id * num_workers, self.end, num_workers))
''' + _SHARDED_ITER),
        ("__iter__ assumes it always runs in a worker", _SHARDED_HEAD + '''
    def shard(self, worker_id, num_workers):
        return iter(range(self.start + worker_id, self.end, num_workers))

    def __iter__(self):
        info = get_worker_info()
        return self.shard(info.id, info.num_workers)
'''),
    ],
}

# Right answers written differently: each must keep full marks (the checks are not over-fitted).
ALTERNATIVES = {
    "batch_sampler": [
        ("slices a list of the sampler's indices; math.ceil for len", '''import math


class MyBatchSampler:
    """Groups the indices of `sampler` into lists of `batch_size`."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError("batch_size must be a positive integer")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        indices = list(self.sampler)
        for k in range(0, len(indices), self.batch_size):
            batch = indices[k:k + self.batch_size]
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
'''),
    ],
    "collate": [
        ("collections.abc tests and np.asarray for numbers", '''import collections.abc


def my_collate(samples):
    """Stack a list of same-structured samples into one batch (see the table above)."""
    first = samples[0]
    if torch.is_tensor(first):
        return torch.stack(samples, dim=0)
    if isinstance(first, np.ndarray):
        return np.stack(samples, axis=0)
    if isinstance(first, collections.abc.Mapping):
        return {key: my_collate([s[key] for s in samples]) for key in first}
    if isinstance(first, tuple):
        return tuple(my_collate([s[i] for s in samples]) for i in range(len(first)))
    if isinstance(first, list):
        return [my_collate([s[i] for s in samples]) for i in range(len(first))]
    return np.asarray(samples)
'''),
    ],
    "dataloader": [
        ("builds each epoch as a list, then returns an iterator over it", '''class MyDataLoader:
    """Iterates over `dataset` in batches."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, seed=None,
                 collate_fn=None):
        self.sampler = MyBatchSampler(range(len(dataset)), batch_size, drop_last)
        self.dataset, self.shuffle = dataset, shuffle
        self.generator = np.random.default_rng(seed)
        self.collate = collate_fn or my_collate

    def __iter__(self):
        n = len(self.dataset)
        order = list(self.generator.permutation(n)) if self.shuffle else list(range(n))
        self.sampler.sampler = order
        batches = [self.collate([self.dataset[int(i)] for i in b]) for b in self.sampler]
        return iter(batches)

    def __len__(self):
        return len(self.sampler)
'''),
    ],
    "balanced_weights": [
        ("collections.Counter, weights normalised to sum to 1", '''from collections import Counter


def balanced_weights(labels):
    """One positive weight per sample; every class gets the same total weight."""
    labels = [int(v) for v in np.asarray(labels).ravel()]
    counts = Counter(labels)
    weights = np.array([1.0 / (len(counts) * counts[v]) for v in labels])
    return weights / weights.sum()
'''),
    ],
    "concat": [
        ("walks through the parts instead of bisecting", '''class MyConcatDataset:
    """Several map-style datasets read as one, one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise ValueError("no datasets")

    def __len__(self):
        return sum(len(d) for d in self.datasets)

    def __getitem__(self, index):
        total = len(self)
        if index < 0:
            index += total
        if index < 0 or index >= total:
            raise IndexError("index out of range")
        for part in self.datasets:
            if index < len(part):
                return part[index]
            index -= len(part)
'''),
    ],
    "sharded": [
        ("even contiguous slices (the first n % W workers get one more)", '''from torch.utils.data import IterableDataset, get_worker_info


class ShardedRange(IterableDataset):
    """The integers start, ..., end - 1, split across DataLoader workers."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def shard(self, worker_id, num_workers):
        size, extra = divmod(self.end - self.start, num_workers)
        first = self.start + worker_id * size + min(worker_id, extra)
        last = first + size + (1 if worker_id < extra else 0)
        return iter(range(first, last))

    def __iter__(self):
        info = get_worker_info()
        worker_id, num_workers = (0, 1) if info is None else (info.id, info.num_workers)
        yield from self.shard(worker_id, num_workers)
'''),
    ],
}
