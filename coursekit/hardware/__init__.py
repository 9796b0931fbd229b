"""Hardware: which device to use, how to time work on it, and what it can do.

The API the labs use::

    from coursekit.hardware import pick_device, synchronize, Timer

    device = pick_device()                  # cuda > mps > cpu; $COURSEKIT_DEVICE overrides
    m = Timer(lambda: a @ b, device=device).measure()
    print(m.median, m.spread)

    from coursekit.hardware import run_benchmarks, plot_bench
    plot_bench(run_benchmarks(quick=True))  # bars as fractions of the device's peak

``coursekit doctor`` (``doctor.py``) builds on the same pieces. One concept per module:
``devices`` (choosing and synchronising), ``timing`` (the timer), ``peaks`` (known peaks and
the CPU estimate), ``bench`` (the measurements), ``host`` (CPU, RAM, OS), ``nvidia`` (the
driver's view), ``probes`` (frameworks probed in child processes), ``environment`` (the
report's facts), ``rules`` (findings and fixes), ``schema`` (the JSON schema), ``report`` (the
human-readable text), ``plot`` (``plot_bench``).

Nothing here imports torch, TensorFlow, JAX or matplotlib at import time.
"""
from __future__ import annotations

from .bench import BenchResult, run_benchmarks
from .devices import (ENV_VAR, DeviceFallbackWarning, available_devices, describe_device, is_usable,
                      pick_device, synchronize)
from .peaks import GPU_PEAKS, Peak, cpu_peak, lookup_gpu
from .plot import plot_bench
from .timing import Measurement, Timer, measure

__all__ = [
    "ENV_VAR", "DeviceFallbackWarning", "available_devices", "describe_device", "is_usable", "pick_device",
    "synchronize", "Timer", "Measurement", "measure", "Peak", "GPU_PEAKS", "lookup_gpu", "cpu_peak",
    "BenchResult", "run_benchmarks", "plot_bench", "environment_report",
]


def environment_report(*, bench: bool = False, quick: bool = True) -> dict:
    """The doctor's report as a dict (what ``coursekit doctor --json`` prints)."""
    from .doctor import build_report

    return build_report(bench=bench, quick=quick)
