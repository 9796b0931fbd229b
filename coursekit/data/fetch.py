"""Fetchers: one batch from a dataset, the same code in the main process and in workers.

A map-style fetcher turns a list of indices into a batch (``__getitems__`` when
the dataset has it, else one ``dataset[i]`` per index, then ``collate_fn``). An
iterable fetcher pulls the next ``batch_size`` samples from its stream and
raises ``StopIteration`` when the stream is done.

When a fetch fails, the fetcher remembers where (:attr:`failed_index`,
:attr:`failed_stage`) so the error can name the sample; the exception itself is
left untouched.
"""

from __future__ import annotations

from itertools import islice
from typing import Any, Callable, Iterator, Sequence

__all__ = ["MapFetcher", "IterableFetcher", "make_fetcher"]


class MapFetcher:
    """Fetches from a map-style dataset.

    Args:
        dataset: the dataset.
        auto_collation: ``True`` when each request is a list of indices (a batch),
            ``False`` when it is a single index (``batch_size=None``).
        collate_fn: applied to the list of samples, or to the single sample.
    """

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable[[Any], Any]) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self._getitems = getattr(dataset, "__getitems__", None) if auto_collation else None
        self.failed_index: Any = None
        self.failed_stage: str = ""

    def fetch(self, request: Any) -> Any:
        self.failed_index, self.failed_stage = None, "load"
        if not self.auto_collation:
            self.failed_index = request
            sample = self.dataset[request]
            self.failed_index, self.failed_stage = None, "collate"
            return self.collate_fn(sample)
        if self._getitems is not None:
            samples = self._getitems(request)
        else:
            samples = []
            dataset = self.dataset
            try:
                for i in request:
                    samples.append(dataset[i])
            except BaseException:
                # The sample that failed is the one after those already fetched.
                self.failed_index = request[len(samples)]
                raise
        self.failed_stage = "collate"
        return self.collate_fn(samples)


class IterableFetcher:
    """Fetches from a stream (an :class:`~coursekit.data.IterableDataset`).

    Args:
        dataset: the iterable dataset; ``iter(dataset)`` is taken once, here.
        auto_collation: batch ``batch_size`` samples per request, or pass single
            samples through ``collate_fn`` when ``False``.
        collate_fn: as for :class:`MapFetcher`.
        batch_size: samples per batch when batching.
        drop_last: drop a final batch smaller than ``batch_size``.
    """

    def __init__(
        self,
        dataset: Any,
        auto_collation: bool,
        collate_fn: Callable[[Any], Any],
        batch_size: int | None,
        drop_last: bool,
    ) -> None:
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.failed_index: Any = None
        self.failed_stage: str = ""
        self._stream: Iterator[Any] = iter(dataset)
        self._ended = False

    def fetch(self, request: Any = None) -> Any:
        """The next batch (or sample); ``StopIteration`` once the stream is done."""
        self.failed_index, self.failed_stage = None, "load"
        if self._ended:
            raise StopIteration
        if not self.auto_collation:
            try:
                sample = next(self._stream)
            except StopIteration:
                self._ended = True
                raise
            self.failed_stage = "collate"
            return self.collate_fn(sample)
        samples = list(islice(self._stream, self.batch_size))
        if len(samples) < self.batch_size:  # type: ignore[operator]
            self._ended = True
            if not samples or self.drop_last:
                raise StopIteration
        self.failed_stage = "collate"
        return self.collate_fn(samples)


def make_fetcher(
    iterable: bool,
    dataset: Any,
    auto_collation: bool,
    collate_fn: Callable[[Any], Any],
    batch_size: int | None,
    drop_last: bool,
) -> MapFetcher | IterableFetcher:
    """The fetcher for a dataset of either style."""
    if iterable:
        return IterableFetcher(dataset, auto_collation, collate_fn, batch_size, drop_last)
    return MapFetcher(dataset, auto_collation, collate_fn)


def describe_failure(fetcher: MapFetcher | IterableFetcher, batch_index: int, request: Sequence[int] | Any) -> str:
    """Where a failed fetch failed, in words, e.g. for an exception note."""
    where = f"batch {batch_index}"
    if isinstance(request, (list, tuple)) and request:
        shown = list(request[:16])
        where += f" (sample indices {shown}{' ...' if len(request) > 16 else ''})"
    if fetcher.failed_stage == "collate":
        return f"while collating {where}"
    if fetcher.failed_index is not None:
        return f"while loading sample index {fetcher.failed_index!r} of {where}"
    return f"while loading {where}"
