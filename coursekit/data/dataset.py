"""Datasets: what a sample is, and how to reach sample ``i``.

Two styles, as in ``torch.utils.data``:

* a *map-style* :class:`Dataset` answers ``dataset[i]`` and ``len(dataset)``;
  a sampler decides which ``i`` come, in which order;
* an :class:`IterableDataset` is a stream: ``iter(dataset)`` yields samples, and
  the dataset itself decides the order (no sampler, no shuffle).

NOTE [Batched fetching with __getitems__]
    Fetching a batch one sample at a time costs one Python call per sample and
    then a stack of all of them. A dataset may instead define
    ``__getitems__(indices)`` (PyTorch 2.x's hook, which the DataLoader calls when
    it exists) and return the whole batch's samples at once. :class:`TensorDataset`
    does it with one fancy index per tensor and returns a :class:`SampleBatch`: a
    read-only sequence of per-sample tuples that also keeps the columns it was cut
    from, so that ``default_collate`` hands those columns back instead of slicing
    them into rows and stacking the rows again. A custom ``collate_fn`` still sees
    an ordinary sequence of samples.
"""

from __future__ import annotations

import bisect
import math
import numbers
import operator
import sys
from collections.abc import Sequence as SequenceABC
from itertools import accumulate
from typing import Any, Generic, Iterable, Iterator, Sequence, TypeVar

import numpy as np

from .generator import Randomness, resolve_generator

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "ConcatDataset",
    "ChainDataset",
    "Subset",
    "SampleBatch",
    "random_split",
]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map-style dataset: ``dataset[i]`` is sample ``i``.

    Subclasses define ``__getitem__`` and, for the default samplers,
    ``__len__``. They may define ``__getitems__(indices)`` to fetch a batch in one
    call (see the note at the top of this module). ``a + b`` concatenates.
    """

    def __getitem__(self, index: int) -> T_co:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__(index)")

    def __add__(self, other: "Dataset[T_co]") -> "ConcatDataset[T_co]":
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """A dataset that is a stream of samples: subclasses define ``__iter__``.

    With ``num_workers > 0`` *every* worker process gets its own copy of the
    dataset and iterates it from the start, so each sample would arrive once
    per worker. To load each sample once, shard inside ``__iter__`` with
    :func:`coursekit.data.get_worker_info` (``None`` in the main process)::

        def __iter__(self):
            info = get_worker_info()
            if info is None:                      # main process: everything
                return iter(range(self.start, self.end))
            return iter(range(self.start + info.id, self.end, info.num_workers))

    ``a + b`` chains two streams.
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__()")

    def __add__(self, other: "Dataset[T_co]") -> "ChainDataset[T_co]":
        return ChainDataset([self, other])


def _first_dim(tensor: Any) -> int:
    shape = getattr(tensor, "shape", None)
    if shape is None or len(shape) == 0:
        raise ValueError(
            f"TensorDataset: every tensor needs a first dimension to index samples by; "
            f"got {type(tensor).__name__} with shape {tuple(shape) if shape is not None else None}"
        )
    return int(shape[0])


def _take_rows(tensor: Any, indices: Sequence[int]) -> Any:
    """``tensor[indices]`` along the first axis, in the cheapest way for its kind."""
    if isinstance(tensor, np.ndarray):
        return tensor.take(indices, axis=0)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(tensor, torch.Tensor):
        # index_select with an int64 index tensor is torch's fastest gather.
        return torch.index_select(tensor, 0, torch.as_tensor(indices, dtype=torch.int64, device=tensor.device))
    return tensor[np.asarray(indices, dtype=np.int64)]


def _rows(column: Any) -> Sequence[Any]:
    """The rows of a gathered column, as ``column[i]`` would give them."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(column, torch.Tensor):
        return column.unbind(0)
    if isinstance(column, np.ndarray):
        return list(column)
    return [column[i] for i in range(_first_dim(column))]


class SampleBatch(SequenceABC):
    """The samples of one batch, cut from stacked columns (see the module note).

    Reading it as a sequence gives tuples ``(column_0[i], column_1[i], ...)``,
    exactly what ``TensorDataset.__getitem__`` returns; the rows are only made
    when someone asks for them. ``default_collate`` returns :attr:`columns`
    directly.

    Args:
        columns: one gathered array or tensor per dataset tensor, all of the
            same first dimension.
    """

    __slots__ = ("columns", "_samples")

    def __init__(self, columns: tuple[Any, ...]) -> None:
        self.columns = columns
        self._samples: list[tuple[Any, ...]] | None = None

    def _materialise(self) -> list[tuple[Any, ...]]:
        if self._samples is None:
            self._samples = list(zip(*(_rows(c) for c in self.columns)))
        return self._samples

    def __len__(self) -> int:
        return _first_dim(self.columns[0])

    def __getitem__(self, i):  # type: ignore[override]
        return self._materialise()[i]

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self._materialise())

    def __repr__(self) -> str:
        return f"SampleBatch({len(self)} samples, {len(self.columns)} columns)"


class TensorDataset(Dataset[tuple[Any, ...]]):
    """Samples are rows: sample ``i`` is ``(t[i] for t in tensors)``.

    Works on NumPy arrays, coursekit tensors and torch tensors, and on a mix of
    them (e.g. NumPy images with torch labels).

    Args:
        *tensors: arrays or tensors sharing their first dimension.

    Raises:
        ValueError: when no tensor is given, or their first dimensions differ.
    """

    def __init__(self, *tensors: Any) -> None:
        if not tensors:
            raise ValueError("TensorDataset: expected at least one array or tensor, got none")
        sizes = [_first_dim(t) for t in tensors]
        if any(s != sizes[0] for s in sizes):
            raise ValueError(
                f"TensorDataset: every tensor must have the same first dimension (the number of "
                f"samples); got sizes {sizes}"
            )
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __getitems__(self, indices: Sequence[int]) -> Sequence[Any]:
        if type(self).__getitem__ is not TensorDataset.__getitem__:
            # A subclass that changes __getitem__ (a transform, say) must see every
            # sample go through it; gathering rows here would silently skip it.
            return [self[i] for i in indices]
        # One gather per tensor instead of len(indices) indexings; see the module note.
        return SampleBatch(tuple(_take_rows(t, indices) for t in self.tensors))

    def __len__(self) -> int:
        return _first_dim(self.tensors[0])


class ConcatDataset(Dataset[T_co]):
    """Several map-style datasets read as one, in order.

    Index ``i`` falls in the first dataset whose cumulative size exceeds it;
    negative indices count from the end, as for a list.

    Args:
        datasets: the map-style datasets, at least one.

    Raises:
        ValueError: for no datasets or an :class:`IterableDataset` among them.
    """

    def __init__(self, datasets: Iterable[Dataset[T_co]]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: expected at least one dataset, got an empty iterable")
        for k, d in enumerate(self.datasets):
            if isinstance(d, IterableDataset):
                raise ValueError(
                    f"ConcatDataset: expected map-style datasets, but dataset {k} is an IterableDataset "
                    f"({type(d).__name__}); chain streams with ChainDataset instead"
                )
        self.cumulative_sizes = list(accumulate(len(d) for d in self.datasets))  # type: ignore[arg-type]

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        try:
            idx = operator.index(idx)
        except TypeError:
            raise TypeError(f"ConcatDataset indices must be integers, got {type(idx).__name__}") from None
        n = len(self)
        if not -n <= idx < n:
            # IndexError (not ValueError) so that `for x in dataset` stops here.
            raise IndexError(f"ConcatDataset index {idx} is out of range for {n} samples (valid: {-n}..{n - 1})")
        if idx < 0:
            idx += n
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        offset = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - offset]


class ChainDataset(IterableDataset[T_co]):
    """Several iterable datasets read one after the other.

    Args:
        datasets: the iterable datasets to chain.
    """

    def __init__(self, datasets: Iterable[Dataset[T_co]]) -> None:
        self.datasets = list(datasets)

    def __iter__(self) -> Iterator[T_co]:
        for d in self.datasets:
            yield from d  # type: ignore[misc]

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)  # type: ignore[arg-type]


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``, in that order.

    Args:
        dataset: the map-style dataset to take samples from.
        indices: positions in ``dataset``; ``subset[k]`` is ``dataset[indices[k]]``.
    """

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return [self.dataset[self.indices[i]] for i in idx]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: Sequence[int]) -> Sequence[T_co]:
        # Keep the parent's batched fetch (e.g. TensorDataset's) reachable through a split.
        if type(self).__getitem__ is not Subset.__getitem__:  # a subclass's __getitem__ wins, as above
            return [self[i] for i in indices]
        inner = [self.indices[i] for i in indices]
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems is not None:
            return getitems(inner)
        return [self.dataset[i] for i in inner]

    def __len__(self) -> int:
        return len(self.indices)


def _split_lengths(n: int, lengths: Sequence[Any]) -> list[int]:
    """Sizes of the splits: ``lengths`` as given, or fractions of ``n``."""
    if not lengths:
        raise ValueError("random_split: expected at least one length or fraction, got none")
    if all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in lengths):
        sizes = [int(x) for x in lengths]
        if any(s < 0 for s in sizes):
            raise ValueError(f"random_split: lengths must be non-negative, got {list(lengths)}")
    elif all(isinstance(x, numbers.Real) and not isinstance(x, bool) for x in lengths):
        # Fractions: floor each share, then hand the leftover samples out one by
        # one from the first split on (PyTorch's rule, so the sizes agree with it).
        for k, f in enumerate(lengths):
            if not 0.0 <= f <= 1.0:
                raise ValueError(f"random_split: fraction {k} must lie in [0, 1], got {f}")
        total = math.fsum(lengths)
        if not math.isclose(total, 1.0):
            raise ValueError(f"random_split: fractions must sum to 1, got {list(lengths)} (sum {total})")
        sizes = [math.floor(n * f) for f in lengths]
        for k in range(n - sum(sizes)):
            sizes[k % len(sizes)] += 1
        return sizes
    else:
        raise TypeError(
            f"random_split: expected all integer lengths or all fractions, got {list(lengths)}"
        )
    if sum(sizes) != n:
        raise ValueError(f"random_split: lengths {sizes} sum to {sum(sizes)}, but the dataset has {n} samples")
    return sizes


def random_split(dataset: Dataset[T_co], lengths: Sequence[int | float], generator: Any = None) -> list[Subset[T_co]]:
    """Split ``dataset`` into non-overlapping random subsets.

    Args:
        dataset: a map-style dataset with ``__len__``.
        lengths: the subsets' sizes, summing to ``len(dataset)``; or fractions
            summing to 1, turned into sizes by flooring and handing the leftover
            samples to the first splits in turn (10 samples, ``[0.25, 0.75]`` →
            3 and 7). A split may be empty.
        generator: ``None``, an int seed, a ``numpy.random.Generator`` or a
            ``torch.Generator`` (then the split equals torch's for the same state).

    Returns:
        One :class:`Subset` per length, in order.
    """
    n = len(dataset)  # type: ignore[arg-type]
    sizes = _split_lengths(n, lengths)
    order = Randomness(resolve_generator(generator, "random_split")).permutation(n)
    return [Subset(dataset, order[end - size : end]) for end, size in zip(accumulate(sizes), sizes)]
