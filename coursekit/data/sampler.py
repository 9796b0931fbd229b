"""Samplers: which sample indices an epoch visits, and in which order.

A sampler is any iterable of indices; a :class:`BatchSampler` groups another
sampler's indices into lists, one list per batch. The DataLoader asks the batch
sampler for a list of indices, fetches those samples and collates them.
"""

from __future__ import annotations

import numbers
from itertools import islice
from typing import Any, Generic, Iterable, Iterator, Sequence, Sized, TypeVar

import numpy as np

from .generator import Randomness, resolve_generator

__all__ = [
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
    "BatchSampler",
]

T_co = TypeVar("T_co", covariant=True)

# RandomSampler with replacement draws indices this many at a time, so that an
# epoch of a huge num_samples never sits in memory at once (PyTorch uses the same
# chunk, which also keeps the two streams equal for the same torch.Generator).
_REPLACEMENT_CHUNK = 32


def _check_positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"{what} should be a positive integer, got {value!r}")
    return int(value)


def _check_bool(value: Any, what: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{what} should be a bool (True or False), got {value!r}")
    return bool(value)


class Sampler(Generic[T_co]):
    """Base class: subclasses define ``__iter__`` (and ``__len__`` when they can).

    Args:
        data_source: accepted for PyTorch compatibility and ignored.
    """

    def __init__(self, data_source: Sized | None = None) -> None:
        pass

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__()")


class SequentialSampler(Sampler[int]):
    """Indices ``0, 1, ..., len(data_source) - 1``, every epoch the same.

    Args:
        data_source: anything with ``__len__``.
    """

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """Indices in random order; a fresh order each epoch.

    Without replacement each epoch is a permutation of ``range(n)``; a
    ``num_samples`` larger than ``n`` continues with further permutations, a
    smaller one takes the first ``num_samples`` of one. With replacement each
    index is drawn independently and uniformly.

    Args:
        data_source: anything with ``__len__``; its length is read each epoch.
        replacement: draw with replacement.
        num_samples: indices per epoch, ``len(data_source)`` by default.
        generator: ``None``, an int seed, a ``numpy.random.Generator`` or a
            ``torch.Generator`` (see :mod:`coursekit.data.generator`).
    """

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Any = None,
    ) -> None:
        self.data_source = data_source
        self.replacement = _check_bool(replacement, "RandomSampler: replacement")
        self._num_samples = num_samples
        self.generator = resolve_generator(generator, "RandomSampler: generator")
        _check_positive_int(self.num_samples, "RandomSampler: num_samples")

    @property
    def num_samples(self) -> int:
        # Read lazily: a dataset may grow between epochs.
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        rng = Randomness(self.generator)
        if self.replacement:
            full, rest = divmod(self.num_samples, _REPLACEMENT_CHUNK)
            for _ in range(full):
                yield from rng.integers(n, _REPLACEMENT_CHUNK)
            yield from rng.integers(n, rest)
        else:
            full, rest = divmod(self.num_samples, n)
            for _ in range(full):
                yield from rng.permutation(n)
            yield from rng.permutation(n)[:rest]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices, in a random order each epoch, without replacement.

    Args:
        indices: the indices to draw from.
        generator: as for :class:`RandomSampler`.
    """

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices = indices
        self.generator = resolve_generator(generator, "SubsetRandomSampler: generator")

    def __iter__(self) -> Iterator[int]:
        for k in Randomness(self.generator).permutation(len(self.indices)):
            yield self.indices[k]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """Indices ``0..len(weights)-1`` drawn with probability ``weights[i] / sum(weights)``.

    The classic use is a class-imbalanced dataset: weight each sample by one over
    its class's frequency and every class arrives about equally often.

    Args:
        weights: one non-negative weight per index (need not sum to 1).
        num_samples: indices per epoch.
        replacement: with replacement (the default); without it, ``num_samples``
            may not exceed the number of non-zero weights.
        generator: as for :class:`RandomSampler`.

    Raises:
        ValueError: for weights that are not a 1-D sequence of finite,
            non-negative numbers with a positive sum, or an impossible
            ``num_samples``.
    """

    def __init__(
        self,
        weights: Sequence[float],
        num_samples: int,
        replacement: bool = True,
        generator: Any = None,
    ) -> None:
        self.num_samples = _check_positive_int(num_samples, "WeightedRandomSampler: num_samples")
        self.replacement = _check_bool(replacement, "WeightedRandomSampler: replacement")
        w = np.asarray(weights.detach().cpu().numpy() if hasattr(weights, "detach") else weights, dtype=np.float64)
        if w.ndim != 1 or w.size == 0:
            raise ValueError(f"WeightedRandomSampler: weights should be a non-empty 1-D sequence, got shape {w.shape}")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError(
                "WeightedRandomSampler: weights should be finite, non-negative and not all zero, "
                f"got min {w.min()}, max {w.max()}, sum {w.sum()}"
            )
        nonzero = int(np.count_nonzero(w))
        if not self.replacement and self.num_samples > nonzero:
            raise ValueError(
                f"WeightedRandomSampler: without replacement num_samples can be at most the number of "
                f"non-zero weights ({nonzero}), got num_samples={self.num_samples}"
            )
        self.weights = w
        self.generator = resolve_generator(generator, "WeightedRandomSampler: generator")

    def __iter__(self) -> Iterator[int]:
        return iter(Randomness(self.generator).weighted(self.weights, self.num_samples, self.replacement))

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Groups the indices of ``sampler`` into lists of ``batch_size``.

    The last list is shorter when the indices do not divide evenly, unless
    ``drop_last`` drops it: 10 indices in batches of 3 give 4 batches (the last of
    one index), or 3 with ``drop_last=True``.

    Args:
        sampler: any iterable of indices (a :class:`Sampler`, a list, a range).
        batch_size: indices per batch, a positive integer.
        drop_last: drop a final batch smaller than ``batch_size``.
    """

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool) -> None:
        self.sampler = sampler
        self.batch_size = _check_positive_int(batch_size, "BatchSampler: batch_size")
        self.drop_last = _check_bool(drop_last, "BatchSampler: drop_last")

    def __iter__(self) -> Iterator[list[int]]:
        indices = iter(self.sampler)
        while True:
            # islice pulls a whole batch in C, instead of one Python step per index.
            batch = list(islice(indices, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
