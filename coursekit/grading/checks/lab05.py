"""Checks for lab05_data: batching, collation, a DataLoader core, class-balancing weights,
ConcatDataset, and an IterableDataset that shards its stream across worker processes.

The references are :mod:`coursekit.data` (``BatchSampler``, ``default_collate``,
``DataLoader``, ``WeightedRandomSampler``, ``ConcatDataset``). The order of a shuffled epoch is
defined by the lab as *one* ``numpy.random.default_rng(seed).permutation(n)`` per epoch from a
generator made once, when the loader is built; the reference gets exactly that order from a
``SubsetRandomSampler`` over ``range(n)`` seeded with the same integer.
"""
from __future__ import annotations

import collections
import multiprocessing
import sys
from typing import Any

import numpy as np

from ..program import Case, check, handed
from ..properties import edge, parameter, promise
from ..warm import torch_meta as warm_up  # noqa: F401 — its checks use the meta device

_REBUILT = ("coursekit.data", "torch.utils.data")

# ---------------------------------------------------------------------------------------------
# references
# ---------------------------------------------------------------------------------------------


def _reference_batch_sampler():
    from coursekit.data import BatchSampler

    return BatchSampler


def _reference_collate():
    from coursekit.data import default_collate

    return default_collate


def _reference_loader():
    from coursekit.data import DataLoader, SubsetRandomSampler

    class ReferenceLoader:
        """``MyDataLoader``'s contract on top of coursekit's DataLoader."""

        def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, seed=None,
                     collate_fn=None):
            sampler = (SubsetRandomSampler(range(len(dataset)), generator=seed)
                       if shuffle else None)
            self._loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler,
                                      drop_last=drop_last, collate_fn=collate_fn)

        def __iter__(self):
            return iter(self._loader)

        def __len__(self):
            return len(self._loader)

    return ReferenceLoader


def _reference_balanced_weights():
    def balanced_weights(labels):
        labels = np.asarray(labels.cpu() if hasattr(labels, "cpu") else labels).reshape(-1)
        _, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
        return 1.0 / counts[inverse]

    return balanced_weights


def _reference_concat():
    from coursekit.data import ConcatDataset

    return ConcatDataset


def _reference_sharded():
    import torch.utils.data as tud

    class ShardedRange(tud.IterableDataset):
        def __init__(self, start, end):
            self.start, self.end = start, end

        def shard(self, worker_id, num_workers):
            return iter(range(self.start + worker_id, self.end, num_workers))

        def __iter__(self):
            info = tud.get_worker_info()
            return self.shard(0, 1) if info is None else self.shard(info.id, info.num_workers)

    return ShardedRange


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


@handed  # the check's program hands it to the student's code
class _Rows:
    """A small map-style dataset: sample ``i`` is ``(features[i], int(labels[i]))``."""

    def __init__(self, features: np.ndarray, labels: np.ndarray):
        self.features, self.labels = features, labels

    def __getitem__(self, index):
        return self.features[index], int(self.labels[index])

    def __len__(self):
        return len(self.labels)


@handed  # the check's program hands it to the student's code
class _NonNegative:
    """A map-style dataset that, like most, accepts only indices 0..len-1."""

    def __init__(self, inner):
        self.inner = inner

    def __getitem__(self, index):
        if not 0 <= index < len(self.inner):
            raise IndexError(f"index {index} out of range 0..{len(self.inner) - 1}")
        return self.inner[index]

    def __len__(self):
        return len(self.inner)


@handed  # the check's program hands it to the student's code
class _Reshuffled:
    """A sampler that, like a shuffling one, gives a new order at every pass."""

    def __init__(self, orders: list[list[int]]):
        self.orders, self.passes = orders, 0

    def __iter__(self):
        order = self.orders[self.passes % len(self.orders)]
        self.passes += 1
        return iter(order)

    def __len__(self):
        return len(self.orders[0])


# A sample type as datasets often return it: a tuple with field names.
_Sample = handed(collections.namedtuple("Sample", ["features", "label"]))


def _rows(rng, n: int, dim: int) -> _Rows:
    features = rng.standard_normal((n, dim)).astype(np.float32)
    # Encode the index in the features so a student sees *which* sample came.
    features[:, 0] = np.arange(n)
    return _Rows(features, rng.integers(0, 10, size=n))


def _structure(value: Any) -> str:
    """A batch's containers, kinds, dtypes, shapes and devices, e.g.
    ``tuple(ndarray[float32](4, 3), ndarray[int64](4,))``."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        return f"torch.Tensor[{str(value.dtype).replace('torch.', '')}]{tuple(value.shape)} " \
               f"on {value.device.type}"
    if isinstance(value, np.ndarray):
        return f"ndarray[{value.dtype}]{value.shape}"
    if isinstance(value, dict):
        return "dict(" + ", ".join(f"{k}: {_structure(v)}" for k, v in value.items()) + ")"
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__}(" + ", ".join(_structure(v) for v in value) + ")"
    return type(value).__name__


def _error_kind(fn):
    """Which of ValueError / TypeError ``fn()`` raises (``"no error"`` if none)."""
    try:
        fn()
    except ValueError:
        return "ValueError"
    except TypeError:
        return "TypeError"
    return "no error"


_ONE_PERMUTATION = ("shuffle: make rng = np.random.default_rng(seed) once in __init__, and draw "
                    "exactly one rng.permutation(len(dataset)) at the start of every epoch")

# ---------------------------------------------------------------------------------------------
# lab05.batch_sampler
# ---------------------------------------------------------------------------------------------


@check("lab05.batch_sampler", reference=_reference_batch_sampler, forbid=_REBUILT)
def batch_sampler_program(impl: Any, rng):
    """MyBatchSampler: batches of indices in sampler order, the partial last one, drop_last."""
    trials = [(int(rng.integers(1, 6)) * 4, 4, False),          # divides evenly
              (int(rng.integers(10, 40)), int(rng.integers(3, 9)), False),
              (int(rng.integers(10, 40)), int(rng.integers(3, 9)), True),
              (int(rng.integers(1, 5)), int(rng.integers(5, 9)), True),   # fewer than one batch
              (int(rng.integers(1, 5)), int(rng.integers(5, 9)), False),
              (0, 3, False)]
    # Planted in every seed: one index past a whole number of batches, and batch_size=1.
    batch_size = int(rng.integers(3, 9))
    trials += [(int(rng.integers(1, 5)) * batch_size + 1, batch_size, False),
               (int(rng.integers(2, 6)), 1, False)]
    for n, batch_size, drop_last in trials:
        order = [int(i) for i in rng.permutation(n)]

        def observe(order=order, batch_size=batch_size, drop_last=drop_last):
            sampler = impl(order, batch_size, drop_last)
            return [list(map(int, b)) for b in sampler], [list(map(int, b)) for b in sampler], \
                len(sampler)

        yield Case(f"{n} indices, batch_size={batch_size}, drop_last={drop_last}", observe,
                   hint="keep the sampler's order; the last batch may be short unless drop_last; "
                        "len() counts the batches an epoch yields (round up, or down with "
                        "drop_last); iterating twice gives the batches twice",
                   names=("batches", "batches when iterated again", "len"))
    # Batches kept side by side as they come: a sampler that yields one list object again and
    # again (filled, yielded, cleared) leaves the same emptied list in every place. Kept by a
    # plain loop, not list(sampler), which calls len() first: a sampler could copy only then.
    n, batch_size = int(rng.integers(7, 20)), int(rng.integers(2, 6))
    order = [int(i) for i in rng.permutation(n)]

    def kept_as_yielded(order=order, batch_size=batch_size):
        batches = []
        for batch in iter(impl(order, batch_size, False)):
            batches.append(batch)
        return [list(map(int, b)) for b in batches]

    yield Case(f"every batch kept as it comes ({n} indices, batch_size={batch_size})",
               kept_as_yielded,
               hint="yield a new list for every batch: a list that is yielded and then cleared "
                    "or refilled changes the batches the caller already holds")
    # A sampler whose order changes between passes: each pass reads the sampler anew.
    n, batch_size = int(rng.integers(7, 20)), int(rng.integers(2, 6))
    orders = [[int(i) for i in rng.permutation(n)] for _ in range(2)]

    def two_passes(orders=orders, batch_size=batch_size):
        sampler = impl(_Reshuffled(orders), batch_size, False)
        return [list(map(int, b)) for b in sampler], [list(map(int, b)) for b in sampler]

    yield Case(f"a sampler with a new order at each pass ({n} indices, batch_size={batch_size})",
               two_passes, hint="iterate over the sampler at every pass (in __iter__), not once "
                                "in __init__: a shuffling sampler gives a new order each time",
               names=("first pass", "second pass"))
    # len() asks the sampler for its length: counting a pass of it instead (len(list(sampler)))
    # uses up a shuffling sampler's next order, so the epoch after len() gets another one.
    n, batch_size = int(rng.integers(7, 20)), int(rng.integers(2, 6))
    orders = [[int(i) for i in rng.permutation(n)] for _ in range(2)]
    if orders[1] == orders[0]:  # planted in every seed: the two orders differ
        orders[1] = orders[0][::-1]

    def len_then_pass(orders=orders, batch_size=batch_size):
        sampler = impl(_Reshuffled(orders), batch_size, False)
        length = len(sampler)
        batches = []
        for batch in sampler:
            batches.append(list(map(int, batch)))
        return length, batches

    yield Case(f"len() of a sampler with a new order at each pass, then its first pass "
               f"({n} indices, batch_size={batch_size})", len_then_pass,
               hint="len() must ask the sampler for its length, len(self.sampler): counting "
                    "its indices (len(list(self.sampler))) runs a pass of a shuffling sampler, "
                    "and the next epoch then gets another order",
               names=("len", "batches of the first pass"))
    yield Case("batch_size=0 raises ValueError", lambda: impl(range(5), 0, False),
               hint="reject a batch_size that is not a positive integer with ValueError")
    for bad in (2.0, -1):  # planted: a float and a negative integer
        yield Case(f"batch_size={bad!r} raises ValueError",
                   lambda bad=bad: _error_kind(lambda: impl(range(5), bad, False)),
                   hint="reject a batch_size that is not a positive integer with ValueError")


# ---------------------------------------------------------------------------------------------
# lab05.collate
# ---------------------------------------------------------------------------------------------


@check("lab05.collate", reference=_reference_collate, forbid=_REBUILT)
def collate_program(impl: Any, rng):
    """my_collate: stack leaves along a new first axis, keep containers, kinds and devices."""
    import torch

    hint = ("stack every leaf along a new first axis: NumPy arrays with np.stack, Python and "
            "NumPy numbers with np.array, torch tensors with torch.stack (which keeps their "
            "device); keep the sample's container (tuple, list, dict)")
    batch, dim = int(rng.integers(2, 7)), int(rng.integers(1, 5))
    samples = [(rng.standard_normal(dim).astype(np.float32), int(rng.integers(0, 10)))
               for _ in range(batch)]
    yield Case(f"{batch} samples (float32 array ({dim},), int label)",
               lambda: (_structure(impl(samples)), impl(samples)), hint=hint,
               names=("structure", "values"))
    h, w = (int(v) for v in rng.integers(1, 4, size=2))
    samples = [{"pixels": rng.standard_normal((h, w)), "label": int(rng.integers(0, 3)),
                "weight": float(rng.uniform())} for _ in range(batch)]
    yield Case(f"{batch} dict samples (pixels ({h}, {w}), label, weight)",
               lambda: (_structure(impl(samples)), impl(samples)), hint=hint,
               names=("structure", "values"))
    samples = [[rng.standard_normal(dim), (int(rng.integers(0, 5)), np.float32(rng.uniform()))]
               for _ in range(batch)]
    yield Case(f"{batch} nested samples [array, (int, np.float32)]",
               lambda: (_structure(impl(samples)), impl(samples)), hint=hint,
               names=("structure", "values"))
    # A bool is an int to isinstance: checked before int, or the flags become int64.
    flags = [bool(v) for v in rng.integers(0, 2, size=batch)]
    samples = [(int(rng.integers(0, 10)), flag) for flag in flags]
    yield Case(f"{batch} samples (int label, bool flag)",
               lambda: (_structure(impl(samples)), impl(samples)),
               hint="a Python bool leaf becomes a bool array (np.array of the bools), not "
                    "int64: test for bool before int, as bool is a subclass of int",
               names=("structure", "values"))
    samples = [torch.from_numpy(rng.standard_normal((dim, 2)).astype(np.float32))
               for _ in range(batch)]
    yield Case(f"{batch} torch tensors ({dim}, 2)",
               lambda: (_structure(impl(samples)), impl(samples)), hint=hint,
               names=("structure", "values"))
    samples = [(torch.empty(dim, 3, device="meta"), int(rng.integers(0, 10)))
               for _ in range(batch)]
    yield Case(f"{batch} samples (tensor on the meta device, int label)",
               lambda: (_structure(impl(samples)), impl(samples)),
               hint="a batch stays on the device its samples are on: use torch.stack, never "
                    "NumPy or a tensor made on the CPU, for torch leaves",
               names=("structure", "values"))
    one = [(rng.standard_normal(dim).astype(np.float32), int(rng.integers(0, 10)))]
    yield Case(f"a batch of one sample (float32 array ({dim},), int label)",
               lambda: (_structure(impl(one)), impl(one)), hint=hint,
               names=("structure", "values"))
    # A namedtuple is a tuple: its batch is a tuple (a namedtuple of the same type is fine
    # too), each position collated. Its constructor takes one argument per field, not one
    # iterable, so building it like a plain tuple raises TypeError.
    pairs = [(rng.standard_normal(dim).astype(np.float32), int(rng.integers(0, 10)))
             for _ in range(batch)]

    def named(pairs=pairs):
        result = impl([_Sample(*pair) for pair in pairs])
        as_tuple = tuple(result) if isinstance(result, tuple) else result
        return _structure(as_tuple), as_tuple

    yield Case(f"{batch} namedtuple samples Sample(features=float32 array ({dim},), "
               f"label=int): a tuple batch", named,
               hint="a namedtuple sample is a tuple: collate each position and return a tuple "
                    "(tuple(...), or the namedtuple type with one argument per field, "
                    "type(first)(*columns)); type(first)(generator) raises TypeError for a "
                    "namedtuple", names=("structure", "values"))
    samples = [rng.standard_normal(dim), rng.standard_normal(dim + 1)]
    yield Case("arrays of different shapes raise ValueError",
               lambda: _error_kind(lambda: impl(samples)),
               hint="let np.stack's ValueError through (or raise your own ValueError)")


# ---------------------------------------------------------------------------------------------
# lab05.dataloader
# ---------------------------------------------------------------------------------------------


def _epochs(loader, count: int):
    return [[batch for batch in loader] for _ in range(count)]


@handed  # the check's program hands it to the student's code
def _identity(samples):
    return list(samples)


@check("lab05.dataloader", reference=_reference_loader, forbid=_REBUILT,
       after=("lab05.batch_sampler", "lab05.collate"))
def dataloader_program(impl: Any, rng):
    """MyDataLoader: order, batching, drop_last and collation against coursekit's DataLoader."""
    configs = [  # (n, batch_size, shuffle, drop_last, collate)
        (int(rng.integers(5, 30)), int(rng.integers(2, 7)), False, False, "identity"),
        (int(rng.integers(5, 30)), int(rng.integers(2, 7)), True, False, "identity"),
        (int(rng.integers(5, 30)), int(rng.integers(2, 7)), True, True, "identity"),
        (int(rng.integers(2, 5)), int(rng.integers(5, 9)), True, True, "identity"),
        (int(rng.integers(5, 30)), int(rng.integers(2, 7)), True, False, "default"),
        (int(rng.integers(2, 6)) * 3, 3, False, True, "default"),
    ]
    for trial, (n, batch_size, shuffle, drop_last, collate) in enumerate(configs):
        dataset = _rows(rng, n, int(rng.integers(1, 4)))
        seed = int(rng.integers(0, 2**31))
        collate_fn = _identity if collate == "identity" else None
        where = (f"n={n}, batch_size={batch_size}, shuffle={shuffle}, drop_last={drop_last}, "
                 + ("collate_fn=list" if collate_fn else "default collate")
                 + (f", seed={seed}" if shuffle else ""))

        def observe(dataset=dataset, batch_size=batch_size, shuffle=shuffle,
                    drop_last=drop_last, seed=seed, collate_fn=collate_fn):
            loader = impl(dataset, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last,
                          seed=seed, collate_fn=collate_fn)
            return (len(loader), *_epochs(loader, 3))

        yield Case(f"trial {trial}: {where}", observe,
                   hint=(_ONE_PERMUTATION if shuffle else "no shuffle: indices 0, 1, ..., n-1")
                        + "; cut the order into batches with your batch sampler; a batch is "
                          "collate_fn(list of samples)",
                   names=("len(loader)", "epoch 0", "epoch 1", "epoch 2"))
    # The defaults, called: batch_size=1, no shuffle, default collate.
    dataset = _rows(rng, int(rng.integers(3, 8)), 2)
    yield Case(f"defaults: MyDataLoader(dataset) over {len(dataset)} samples",
               lambda: (lambda loader: (len(loader), *_epochs(loader, 2)))(impl(dataset)),
               hint="keep the defaults of the signature: batch_size=1, shuffle=False, "
                    "drop_last=False, the default collate",
               names=("len(loader)", "epoch 0", "epoch 1"))
    # Samples already on a device (here PyTorch's data-less `meta` device) stay there.
    import torch

    n, batch_size, dim = int(rng.integers(5, 15)), int(rng.integers(2, 5)), int(rng.integers(1, 4))
    labels = [int(v) for v in rng.integers(0, 10, size=n)]
    on_meta = [(torch.empty(dim, device="meta"), label) for label in labels]
    seed = int(rng.integers(0, 2**31))
    yield Case(f"samples on the meta device (n={n}, batch_size={batch_size}, shuffle=True, "
               f"default collate)",
               lambda: [_structure(b) for b in impl(on_meta, batch_size=batch_size, shuffle=True,
                                                    seed=seed)],
               hint="the default collate must keep torch tensors on their device: never move a "
                    "batch to the CPU or through NumPy")
    # Properties every correct loader has, with their own messages.
    n, batch_size = int(rng.integers(12, 40)), int(rng.integers(2, 6))
    dataset = _rows(rng, n, 1)
    seed = int(rng.integers(0, 2**31))

    def visits():
        loader = impl(dataset, batch_size=batch_size, shuffle=True, seed=seed,
                      collate_fn=lambda s: [int(x[0][0]) for x in s])
        seen = [sorted(i for b in epoch for i in b) for epoch in _epochs(loader, 2)]
        return {"epoch 0 visits every sample once": seen[0] == list(range(n)),
                "epoch 1 visits every sample once": seen[1] == list(range(n))}

    yield Case(f"each shuffled epoch is a permutation (n={n}, batch_size={batch_size})", visits,
               hint="every epoch must visit each index exactly once, the last partial batch "
                    "included")

    def same_seed(seed):
        def order(loader):
            return [int(x[0][0]) for epoch in _epochs(loader, 2) for b in epoch for x in b]
        a = impl(dataset, batch_size=batch_size, shuffle=True, seed=seed, collate_fn=_identity)
        b = impl(dataset, batch_size=batch_size, shuffle=True, seed=seed, collate_fn=_identity)
        c = impl(dataset, batch_size=batch_size, shuffle=True, seed=seed + 1,
                 collate_fn=_identity)
        first = order(a)
        return {"same seed, same order": first == order(b),
                "another seed, another order": first != order(c)}

    for planted in (seed, 0):   # seed=0 is a seed like any other, not "no seed"
        yield Case(f"seeding (seed={planted}): the same seed repeats the order, another seed "
                   f"changes it", lambda s=planted: same_seed(s),
                   hint=_ONE_PERMUTATION + "; seed=0 is a seed: pass it to default_rng as it is")

    def after_a_break():
        loader = impl(dataset, batch_size=batch_size, shuffle=True, seed=seed,
                      collate_fn=_identity)
        for _ in loader:
            break            # an epoch left after its first batch
        return [int(x[0][0]) for b in loader for x in b]

    yield Case("the epoch after one left at its first batch (shuffle=True)", after_a_break,
               hint="draw each epoch's permutation when the epoch starts (in __iter__), not when "
                    "the previous one ends: an epoch left early (break) still used one")
    yield Case("batch_size=0 raises ValueError",
               lambda: _error_kind(lambda: impl(dataset, batch_size=0)),
               hint="raise ValueError when the loader is built, in __init__, not on first "
                    "iteration: e.g. construct your MyBatchSampler once there, which rejects it")


# ---------------------------------------------------------------------------------------------
# lab05.balanced_weights
# ---------------------------------------------------------------------------------------------


def _label_sets(rng):
    """Imbalanced label vectors: counts spread over two orders of magnitude."""
    sets = []
    for kind in ("range", "arbitrary", "list", "torch"):
        classes = int(rng.integers(3 if kind == "arbitrary" else 2, 6))
        counts = [int(c) for c in np.round(np.exp(rng.uniform(0, np.log(400), size=classes)))]
        if kind == "arbitrary":
            counts[int(rng.integers(0, classes))] = 1   # a class with a single sample
        values = np.arange(classes)
        if kind == "arbitrary":  # any integers, at least one of them negative
            values = np.sort(rng.choice(np.arange(-50, 50), size=classes, replace=False))
            if values[0] >= 0:
                values[0] = -int(rng.integers(1, 51))
            # and two beyond 2**24, which float32 cannot tell apart
            values[-2:] = (2 ** 24, 2 ** 24 + 1)
        labels = rng.permutation(np.repeat(values, counts))
        sets.append((kind, labels, values))
    return sets


def _array_kind(value: Any) -> str:
    """"a NumPy array of floats", or what else ``value`` is."""
    if isinstance(value, np.ndarray):
        return "a NumPy array of floats" if value.dtype.kind == "f" else \
            f"a NumPy array of {value.dtype}"
    return f"a {type(value).__module__}.{type(value).__qualname__}"


_DRAWS = 20_000
_TOLERANCE = 0.03  # ≥ 8 standard deviations of a class frequency over 20,000 draws


@check("lab05.balanced_weights", reference=_reference_balanced_weights)
def balanced_weights_program(impl: Any, rng):
    """balanced_weights: every class gets the same total weight; sampling comes out balanced."""
    import torch
    from coursekit.data import WeightedRandomSampler

    givens = {}
    for kind, labels, values in _label_sets(rng):
        given: Any = labels
        if kind == "list":
            given = [int(v) for v in labels]
        elif kind == "torch":
            given = torch.from_numpy(labels.astype(np.int64))
        givens[kind] = given
        counts = {int(v): int((labels == v).sum()) for v in values}
        seed = int(rng.integers(0, 2**31))
        where = f"{kind} labels, class counts {counts}"

        def shares(given=given, labels=labels, values=values):
            w = np.asarray(impl(given), dtype=np.float64)
            return {"shape": list(w.shape),
                    "every weight positive and finite": bool(np.all(np.isfinite(w))
                                                             and np.all(w > 0)),
                    "share of the total weight per class":
                        np.array([w[labels == v].sum() for v in values]) / w.sum()}

        yield Case(f"weights for {where}", shares,
                   hint="weight each sample by 1 / (number of samples of its class), so every "
                        "class adds up to the same total; labels may be any integers, a list or "
                        "a torch tensor", rtol=1e-6, atol=1e-9)

        def sampled(given=given, labels=labels, values=values, seed=seed):
            w = np.asarray(impl(given), dtype=np.float64)
            drawn = labels[list(WeightedRandomSampler(w, _DRAWS, generator=seed))]
            freq = np.array([(drawn == v).mean() for v in values])
            return bool(np.all(np.abs(freq - 1 / len(values)) < _TOLERANCE))

        yield Case(f"{_DRAWS} draws with WeightedRandomSampler: each class within "
                   f"{_TOLERANCE} of 1/{len(values)} ({where})", sampled,
                   hint="rare classes need larger weights per sample than common ones")
    yield Case("the weights are a NumPy array of floats, for range, arbitrary, list and torch "
               "labels", lambda: {kind: _array_kind(impl(given)) for kind, given in givens.items()},
               weight=0.5,
               hint="return a NumPy array of floats whatever the labels came as (a list, a torch "
                    "tensor): turn them into one with np.asarray first, not a torch tensor or a "
                    "list of weights")


# ---------------------------------------------------------------------------------------------
# lab05.concat
# ---------------------------------------------------------------------------------------------


@check("lab05.concat", reference=_reference_concat, forbid=_REBUILT)
def concat_program(impl: Any, rng):
    """MyConcatDataset: length, every index (negative ones too), IndexError out of range."""
    for trial in range(3):
        sizes = [int(s) for s in rng.integers(1, 7, size=int(rng.integers(2, 5)))]
        if trial == 1:
            sizes.insert(int(rng.integers(1, len(sizes))), 0)   # an empty dataset in the middle
        parts = [[(f"dataset {d}", i) for i in range(size)] for d, size in enumerate(sizes)]
        total = sum(sizes)

        yield Case(f"len of datasets of sizes {sizes}", lambda p=parts: len(impl(p)),
                   hint="the length is the sum of the parts' lengths")
        yield Case(f"items 0..{total - 1} of sizes {sizes}",
                   lambda p=parts, t=total: [impl(p)[i] for i in range(t)],
                   hint="find the first dataset whose cumulative size is greater than the "
                        "index; careful at the boundaries and with empty datasets")
        yield Case(f"items -1..-{total} of sizes {sizes}",
                   lambda p=parts, t=total: [impl(p)[-i] for i in range(1, t + 1)],
                   hint="a negative index counts from the end of the whole concatenation: add "
                        "len(self) first")
        for index in (total, -total - 1, total + int(rng.integers(1, 10))):
            yield Case(f"index {index} of {total} samples raises IndexError",
                       lambda p=parts, i=index: impl(p)[i],
                       hint="raise IndexError for an index outside -len..len-1 (a for loop over "
                            "the dataset relies on it to stop)")
    first = [(int(i),) for i in range(int(rng.integers(2, 5)))]
    second = _NonNegative(_rows(rng, 3, 2))
    yield Case("a list followed by a map-style dataset object (indices 0..len-1 only)",
               lambda: [impl([first, second])[i][0] for i in range(len(first) + 3)],
               hint="any object with __len__ and __getitem__ is a dataset, and most accept only "
                    "0..len-1: hand each part an index counted from its own start")
    yield Case("no datasets at all raises ValueError", lambda: _error_kind(lambda: impl([])),
               hint="raise ValueError when the list of datasets is empty")


# ---------------------------------------------------------------------------------------------
# lab05.sharded
# ---------------------------------------------------------------------------------------------


def _simulated_shards(impl: Any, start: int, end: int, workers: int) -> dict:
    dataset = impl(start, end)
    parts = [[int(v) for v in dataset.shard(w, workers)] for w in range(workers)]
    joined = [v for part in parts for v in part]
    sizes = [len(p) for p in parts]
    return {"all samples, sorted": sorted(joined),
            "no sample twice": len(joined) == len(set(joined)),
            "shard sizes differ by at most 1": max(sizes) - min(sizes) <= 1}


_SHARD_HINT = ("worker w of W takes every W-th sample starting at start + w (or an even "
               "contiguous slice); together the shards must cover the range once, and no shard "
               "may be more than one sample longer than another")


@check("lab05.sharded", reference=_reference_sharded)
def sharded_program(impl: Any, rng):
    """ShardedRange: every sample exactly once across workers, shards balanced."""
    for trial in range(4):
        start = int(rng.integers(-20, 20))
        if trial == 0:    # one worker: the whole range
            end, workers = start + int(rng.integers(5, 30)), 1
        elif trial == 1:  # n = W*k + 1: slices of ceil(n / W) leave the last worker short
            workers = int(rng.integers(3, 6))
            end = start + workers * int(rng.integers(2, 6)) + 1
        else:             # anything, an empty range included
            end, workers = start + int(rng.integers(0, 30)), int(rng.integers(2, 6))

        yield Case(f"range({start}, {end}) over {workers} simulated worker(s)",
                   lambda start=start, end=end, workers=workers:
                       _simulated_shards(impl, start, end, workers),
                   hint=_SHARD_HINT)
    import torch.utils.data as tud

    start, end = int(rng.integers(0, 10)), int(rng.integers(20, 60))
    # A notebook's classes reach forked workers only: spawn and forkserver pickle them by name.
    fork = ({"multiprocessing_context": "fork"}
            if "fork" in multiprocessing.get_all_start_methods() else {})
    def twice():
        dataset = impl(start, end)
        return [int(v) for v in dataset], [int(v) for v in dataset]

    yield Case(f"range({start}, {end}) iterated twice in the main process", twice,
               names=("first pass", "second pass"),
               hint="__iter__ must return a fresh iterator each time (an epoch per pass), not "
                    "one stored iterator that is exhausted after the first pass")
    # Three workers too: code that assumes two (or an even count) passes with 0 and 2.
    for workers in (0, 2, 3):
        yield Case(f"torch DataLoader with num_workers={workers} over range({start}, {end})",
                   lambda w=workers: sorted(int(v) for v in tud.DataLoader(
                       impl(start, end), batch_size=None, num_workers=w,
                       **(fork if w else {}))),
                   hint="__iter__ must call torch.utils.data.get_worker_info(): None in the main "
                        "process (yield everything), else shard by info.id and info.num_workers")
    # Planted in every seed (the trials above draw one by chance): an empty range, drawn last
    # so that the cases above keep their inputs.
    empty_at, empty_workers = int(rng.integers(-20, 20)), int(rng.integers(2, 6))
    yield Case(f"an empty range({empty_at}, {empty_at}) over {empty_workers} simulated workers",
               lambda: _simulated_shards(impl, empty_at, empty_at, empty_workers), weight=0.5,
               hint="an empty range is a stream like any other: every worker's shard is empty, "
                    "without an error")


# MyBatchSampler, MyDataLoader, MyConcatDataset and ShardedRange are classes: their rows are
# promises and edges (the test derives no parameters from a class handed to grade()).
PROPERTIES = {
    "lab05.batch_sampler": (
        promise("lists of batch_size indices, in the sampler's order",
                "38 indices, batch_size=5, drop_last=False: batches"),
        promise("the last list is shorter when the indices do not divide evenly",
                "indices, batch_size=4, drop_last=False: batches"),
        promise("drop_last=True drops the short list", "drop_last=True: batches"),
        promise("iterating again starts a new pass", "batches when iterated again"),
        promise("every batch is a list of its own", "every batch kept as it comes"),
        promise("each pass reads the sampler anew (a sampler object)",
                "a sampler with a new order at each pass"),
        promise("len() counts the lists of one pass, rounding up",
                "38 indices, batch_size=5, drop_last=False: len"),
        promise("len() rounds down with drop_last=True", "drop_last=True: len"),
        promise("len() asks the sampler for its length, without running a pass of it",
                "len() of a sampler with a new order at each pass"),
        promise("a batch_size that is not a positive integer raises ValueError",
                "batch_size=0 raises ValueError"),
        promise("torch.utils.data is not used", forbidden="torch.utils.data"),
        promise("coursekit.data is not used", forbidden="coursekit.data"),
        edge("the indices divide evenly", "8 indices, batch_size=4"),
        edge("one index past a whole number of batches", "9 indices, batch_size=4"),
        edge("fewer indices than one batch", "3 indices, batch_size=5, drop_last=True"),
        edge("an empty sampler", "0 indices"),
        edge("batch_size=1", "batch_size=1"),
        edge("a float batch_size", "batch_size=2.0 raises ValueError"),
        edge("a negative batch_size", "batch_size=-1 raises ValueError"),
    ),
    "lab05.collate": (
        parameter("samples", "samples (float32 array"),
        promise("a NumPy array leaf is np.stack-ed", "float32 array (3,), int label): structure"),
        promise("a Python or NumPy number becomes a 1-D array (int64, float64)",
                "nested samples [array, (int, np.float32)]: structure"),
        promise("a Python bool becomes a bool array, not int64",
                "(int label, bool flag): structure"),
        promise("a torch tensor is torch.stack-ed", "torch tensors (3, 2): structure"),
        promise("a torch batch stays on its samples' device",
                "(tensor on the meta device, int label): structure"),
        promise("a dict gives a dict of the same keys", "dict samples (pixels (1, 1), label, weight)"),
        promise("a tuple stays a tuple, a list a list, each position collated",
                "nested samples [array, (int, np.float32)]: values"),
        promise("arrays of different shapes raise ValueError",
                "arrays of different shapes raise ValueError"),
        promise("torch.utils.data is not used", forbidden="torch.utils.data"),
        promise("coursekit.data is not used", forbidden="coursekit.data"),
        edge("a namedtuple sample is a tuple: a tuple batch, each position collated",
             "namedtuple samples"),
        edge("a batch of one sample", "a batch of one sample"),
        edge("tensors on the meta device", "tensor on the meta device"),
    ),
    "lab05.dataloader": (
        promise("batch_size=1, no shuffle, no drop_last, my_collate by default",
                "defaults: MyDataLoader(dataset) over 6 samples: epoch 0"),
        promise("without shuffle an epoch visits 0 .. len - 1",
                "trial 0: n=16, batch_size=4, shuffle=False"),
        promise("with shuffle one rng.permutation per epoch from default_rng(seed)",
                "shuffle=True, drop_last=False, collate_fn=list, seed="),
        promise("epochs differ from each other", "epoch 2"),
        promise("each shuffled epoch visits every sample once", "each shuffled epoch is a permutation"),
        promise("the same seed gives the same order, another seed another",
                "the same seed repeats the order"),
        edge("seed=0 is a seed", "seeding (seed=0)"),
        promise("one permutation drawn at the start of every epoch, even after an early break",
                "the epoch after one left at its first batch"),
        promise("batches cut with drop_last", "shuffle=True, drop_last=True"),
        promise("collate_fn is used when given", "collate_fn=list: epoch 0"),
        promise("my_collate when collate_fn is None", "default collate: epoch 0"),
        promise("len(loader) is the number of batches per epoch", "len(loader)"),
        promise("an invalid batch_size raises ValueError when the loader is built",
                "batch_size=0 raises ValueError"),
        promise("torch.utils.data is not used", forbidden="torch.utils.data"),
        promise("coursekit.data is not used", forbidden="coursekit.data"),
        edge("batch_size larger than the dataset, with drop_last", "n=4, batch_size=5"),
        edge("samples on the meta device stay there", "samples on the meta device"),
    ),
    "lab05.balanced_weights": (
        parameter("labels", "weights for range labels"),
        promise("every class has the same total weight", "weights for arbitrary labels"),
        promise("WeightedRandomSampler then draws every class equally often",
                "draws with WeightedRandomSampler"),
        promise("every weight positive", "weights for range labels"),
        promise("a float NumPy array", "the weights are a NumPy array of floats"),
        edge("labels given as a list", "weights for list labels"),
        edge("labels given as a torch tensor", "weights for torch labels"),
        edge("classes that are not 0 .. C-1 (negative ones)", "weights for arbitrary labels"),
        edge("a class with a single sample", "class counts {0: 1,"),
        edge("labels beyond 2**24, which float32 would merge", "16777217:"),
    ),
    "lab05.concat": (
        promise("len() is the sum of the parts' lengths", "len of datasets of sizes"),
        promise("d[i] for 0 <= i < len(d) is the right part's item", "items 0..9 of sizes"),
        promise("a negative index counts from the end of the whole concatenation",
                "items -1..-10 of sizes"),
        promise("an index outside -len(d) .. len(d) - 1 raises IndexError",
                "index 13 of 10 samples raises IndexError"),
        promise("an empty list of datasets raises ValueError", "no datasets at all raises ValueError"),
        promise("each part gets an index counted from its own start (a dataset object)",
                "a list followed by a map-style dataset object"),
        promise("torch.utils.data is not used", forbidden="torch.utils.data"),
        promise("coursekit.data is not used", forbidden="coursekit.data"),
        edge("index len(d)", "index 10 of 10 samples raises IndexError"),
        edge("index -len(d) - 1", "index -11 of 10 samples raises IndexError"),
        edge("an empty part in the middle", "items -1..-17 of sizes [4, 0, 3, 5, 5]"),
    ),
    "lab05.sharded": (
        promise("the shards together hold every integer of the range exactly once",
                "over 5 simulated worker(s)"),
        promise("no shard more than one element longer than another (n = W*k + 1)",
                "range(-4, 22) over 5 simulated worker(s)"),
        promise("__iter__ gives the whole range in order without workers",
                "iterated twice in the main process: first pass"),
        promise("__iter__ gives a fresh iterator at each pass",
                "iterated twice in the main process: second pass"),
        promise("__iter__ shards by get_worker_info() in a real DataLoader",
                "torch DataLoader with num_workers=2"),
        edge("one worker", "over 1 simulated worker(s)"),
        edge("three workers in a real DataLoader", "torch DataLoader with num_workers=3"),
        edge("num_workers=0", "torch DataLoader with num_workers=0"),
        edge("an empty range", "an empty range("),
    ),
}
