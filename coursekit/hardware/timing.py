"""Timing a piece of work properly.

Four things make a measurement mean something, and ``Timer`` does all of them:

1. **Warm-up.** The first calls pay for lazy initialisation, kernel selection (cuBLAS picks
   an algorithm), page faults and cold caches. They are run and thrown away.
2. **Waiting for the device.** GPU calls return before the work is done (see
   ``devices.py``). On CUDA the timer brackets the calls with CUDA events, which are stamped on
   the GPU itself; elsewhere it synchronises and reads the host clock.
3. **Enough work per reading.** A reading shorter than the clock's resolution and the
   launch overhead is noise, so each repeat runs the function ``inner`` times, chosen so a
   repeat lasts at least ``min_repeat_time``.
4. **Repeats, median and spread.** One reading is an anecdote. The median of several is
   robust to a stray interruption, and the interquartile range says how much to trust it.

``Measurement.times`` holds seconds *per call*, one entry per repeat.
"""
from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable

from .devices import DeviceLike, _device_type, synchronize


@dataclass(frozen=True)
class Measurement:
    """The result of ``Timer.measure()``: per-call times and their statistics.

    Attributes:
        times: seconds per call, one entry per repeat (each the mean over ``inner`` calls).
        inner: calls per repeat.
        warmup: calls run and discarded before measuring.
        method: ``"cuda-events"``, ``"synchronize+perf_counter"`` or ``"perf_counter"``.
        device: the device synchronised with, as a string.
    """

    times: tuple[float, ...]
    inner: int
    warmup: int
    method: str
    device: str = "cpu"

    @property
    def repeats(self) -> int:
        return len(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.times)

    @property
    def min(self) -> float:
        return min(self.times)

    @property
    def max(self) -> float:
        return max(self.times)

    @property
    def stdev(self) -> float:
        return statistics.stdev(self.times) if len(self.times) > 1 else 0.0

    @property
    def iqr(self) -> float:
        """Interquartile range (75th minus 25th percentile) of the per-call times."""
        if len(self.times) < 2:
            return 0.0
        q1, _, q3 = statistics.quantiles(self.times, n=4, method="inclusive")
        return q3 - q1

    @property
    def spread(self) -> float:
        """IQR relative to the median: 0.02 means the middle half lies within about 2 %."""
        return self.iqr / self.median if self.median > 0 else 0.0

    def rate(self, work: float) -> float:
        """``work`` per second at the median time, e.g. FLOPs/s for ``work`` = FLOPs per call."""
        return work / self.median if self.median > 0 else math.inf

    def as_dict(self) -> dict[str, Any]:
        return {
            "median_s": self.median,
            "spread": self.spread,
            "repeats": self.repeats,
            "inner": self.inner,
            "method": self.method,
        }

    def __str__(self) -> str:
        return (f"{_format_seconds(self.median)} per call ± {100 * self.spread:.1f} % IQR "
                f"(median of {self.repeats} × {self.inner} calls, {self.method}, {self.device})")


def _format_seconds(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


class Timer:
    """Times ``fn()`` with warm-up, synchronisation, repeats, median and spread.

    Args:
        fn: the work, a callable with no arguments. To keep caches from flattering the
            result, let it rotate through several inputs (see ``bench.py``).
        device: the device ``fn`` runs on; the timer waits for it. ``None`` for plain Python.
        warmup: calls to run and discard first.
        repeats: readings to take.
        inner: calls per reading; ``None`` picks enough calls for ``min_repeat_time``.
        min_repeat_time: seconds one reading should last at least, when ``inner`` is ``None``.
        use_events: use CUDA events on a CUDA device (default); ``False`` forces the host clock
            around a synchronisation, which suits host-driven work such as pageable copies.
        clock: the host clock (tests pass a fake one).

    Example:
        >>> Timer(lambda: sum(range(1000)), repeats=5).measure().median > 0
        True
    """

    def __init__(self, fn: Callable[[], Any], *, device: DeviceLike = None, warmup: int = 3,
                 repeats: int = 10, inner: int | None = None, min_repeat_time: float = 0.02,
                 max_inner: int = 100_000, use_events: bool | None = None,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        if repeats < 1:
            raise ValueError(f"repeats must be at least 1, got {repeats}")
        if warmup < 0:
            raise ValueError(f"warmup must be non-negative, got {warmup}")
        if inner is not None and inner < 1:
            raise ValueError(f"inner must be at least 1 or None, got {inner}")
        self.fn = fn
        self.device = device
        self.warmup = warmup
        self.repeats = repeats
        self.inner = inner
        self.min_repeat_time = min_repeat_time
        self.max_inner = max_inner
        self.clock = clock
        self._kind = _device_type(device)
        self.use_events = self._kind == "cuda" if use_events is None else (use_events and self._kind == "cuda")

    @property
    def method(self) -> str:
        if self.use_events:
            return "cuda-events"
        return "perf_counter" if self._kind == "cpu" else "synchronize+perf_counter"

    def _sync(self) -> None:
        if self._kind != "cpu":
            synchronize(self.device)

    def _host_reading(self, inner: int) -> float:
        self._sync()
        start = self.clock()
        for _ in range(inner):
            self.fn()
        self._sync()
        return (self.clock() - start) / inner

    def _event_reading(self, inner: int) -> float:
        import torch

        with torch.cuda.device(self.device):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            for _ in range(inner):
                self.fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1000.0 / inner  # elapsed_time is in ms

    def _reading(self, inner: int) -> float:
        return self._event_reading(inner) if self.use_events else self._host_reading(inner)

    def _calibrate(self) -> int:
        """Calls per reading so that one reading lasts ``min_repeat_time``."""
        one = self._reading(1)
        if one <= 0:
            return self.max_inner
        return max(1, min(self.max_inner, math.ceil(self.min_repeat_time / one)))

    def measure(self) -> Measurement:
        for _ in range(self.warmup):
            self.fn()
        self._sync()
        inner = self.inner if self.inner is not None else self._calibrate()
        times = tuple(self._reading(inner) for _ in range(self.repeats))
        return Measurement(times, inner, self.warmup, self.method,
                           str(self.device) if self.device is not None else "cpu")


def measure(fn: Callable[[], Any], **kwargs: Any) -> Measurement:
    """``Timer(fn, **kwargs).measure()``."""
    return Timer(fn, **kwargs).measure()
