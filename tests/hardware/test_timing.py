"""The timer: warm-up, repeats, calls per reading, median and spread.

Statistics are checked exactly with a fake clock that a fake workload advances by known
durations; one test uses real sleeps, with generous bounds, to prove the wiring to the real
clock.
"""
from __future__ import annotations

import math
import time
from typing import Iterable

import pytest

from coursekit.hardware.timing import Measurement, Timer, measure

from .conftest import requires_cuda


class FakeWork:
    """Each call advances a fake clock by the next of ``durations`` seconds."""

    def __init__(self, durations: Iterable[float]) -> None:
        self.durations = iter(durations)
        self.now = 0.0
        self.calls = 0

    def clock(self) -> float:
        return self.now

    def __call__(self) -> None:
        self.now += next(self.durations)
        self.calls += 1


def test_warmup_calls_are_discarded_and_each_repeat_is_one_reading() -> None:
    work = FakeWork([100.0, 100.0, 1.0, 2.0, 3.0, 4.0, 100.0])
    m = Timer(work, warmup=2, repeats=5, inner=1, clock=work.clock).measure()
    assert work.calls == 7
    assert m.times == (1.0, 2.0, 3.0, 4.0, 100.0)
    assert (m.warmup, m.inner, m.repeats) == (2, 1, 5)


def test_median_ignores_an_outlier_that_the_mean_does_not() -> None:
    work = FakeWork([1.0, 2.0, 3.0, 4.0, 100.0])
    m = Timer(work, warmup=0, repeats=5, inner=1, clock=work.clock).measure()
    assert m.median == 3.0
    assert m.mean == 22.0
    assert (m.min, m.max) == (1.0, 100.0)


def test_iqr_and_spread() -> None:
    m = Measurement(times=(1.0, 2.0, 3.0, 4.0, 100.0), inner=1, warmup=0, method="perf_counter")
    assert m.iqr == 2.0  # quartiles 2 and 4 of the five readings
    assert m.spread == pytest.approx(2.0 / 3.0)
    assert m.stdev == pytest.approx(math.sqrt((21**2 + 20**2 + 19**2 + 18**2 + 78**2) / 4))  # sample stdev, mean 22


def test_a_single_reading_has_zero_spread() -> None:
    m = Measurement(times=(0.5,), inner=3, warmup=1, method="perf_counter")
    assert (m.median, m.iqr, m.spread, m.stdev) == (0.5, 0.0, 0.0, 0.0)


def test_each_reading_is_the_mean_over_inner_calls() -> None:
    work = FakeWork([1.0, 3.0, 2.0, 2.0, 10.0, 0.0])
    m = Timer(work, warmup=0, repeats=3, inner=2, clock=work.clock).measure()
    assert m.times == (2.0, 2.0, 5.0)


def test_inner_is_calibrated_so_a_reading_lasts_min_repeat_time() -> None:
    work = FakeWork([0.25] * 100)
    m = Timer(work, warmup=1, repeats=3, min_repeat_time=1.0, clock=work.clock).measure()
    assert m.inner == 4  # one calibration call of 0.25 s -> 4 calls per 1 s reading
    assert work.calls == 1 + 1 + 3 * 4
    assert m.times == (0.25, 0.25, 0.25)


def test_calibration_is_capped() -> None:
    work = FakeWork([0.0] * 50)
    m = Timer(work, warmup=0, repeats=1, max_inner=7, clock=work.clock).measure()
    assert m.inner == 7


def test_rate_is_work_per_second_at_the_median() -> None:
    m = Measurement(times=(0.5, 0.25, 1.0), inner=1, warmup=0, method="perf_counter")
    assert m.rate(10.0) == 20.0


def test_real_sleeps_are_timed_within_generous_bounds() -> None:
    m = measure(lambda: time.sleep(0.005), warmup=1, repeats=3, inner=2)
    assert 0.0045 <= m.median < 0.25
    assert m.method == "perf_counter" and m.device == "cpu"
    assert "per call" in str(m)


def test_summary_dict_has_the_fields_the_report_uses() -> None:
    m = Measurement(times=(1.0, 2.0), inner=1, warmup=0, method="perf_counter")
    assert set(m.as_dict()) == {"median_s", "spread", "repeats", "inner", "method"}
    assert all(math.isfinite(v) for v in (m.median, m.spread))


@pytest.mark.parametrize("kwargs, message", [
    ({"repeats": 0}, "repeats"), ({"warmup": -1}, "warmup"), ({"inner": 0}, "inner"),
])
def test_bad_arguments_raise_value_error(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Timer(lambda: None, **kwargs)


def test_cpu_device_uses_the_host_clock_without_cuda_events() -> None:
    timer = Timer(lambda: None, device="cpu")
    assert not timer.use_events and timer.method == "perf_counter"


def test_cuda_device_uses_events_unless_told_otherwise() -> None:
    # Only the choice is checked here: no CUDA call happens until measure().
    assert Timer(lambda: None, device="cuda:0").method == "cuda-events"
    assert Timer(lambda: None, device="cuda:0", use_events=False).method == "synchronize+perf_counter"


@pytest.mark.gpu
@requires_cuda
def test_cuda_events_time_a_matmul() -> None:
    import torch

    a = torch.randn(2048, 2048, device="cuda")
    m = Timer(lambda: a @ a, device="cuda", warmup=3, repeats=5).measure()
    assert m.method == "cuda-events" and m.median > 0
    flops = m.rate(2 * 2048**3)
    assert 1e11 < flops < 1e16
