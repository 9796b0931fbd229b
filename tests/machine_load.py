"""How busy the machine is, for the tests whose limits are times.

A test that gives a program a few seconds (a cell timeout that interrupts an infinite loop, a
bound that tells "noticed at once" from "noticed at the timeout", a pause in which a live
daemon would write) states what it expects of an idle machine. On a busy one (other
gradings, a browser, ``make test-under-load``) every program gets a share of a core, and the
same work takes longer by that factor. Such a test multiplies its times by the factor
(:func:`scaled`): it waits longer on a busy machine, and what it proves stays the same.
"""
from __future__ import annotations

import math
import time

SAMPLE_CPU_S = 0.02   # a few scheduler periods' worth of work
SAMPLES = 3           # the largest of three: a short lull must not shorten a limit
FRESH_S = 10.0        # a measure is reused this long


_last: tuple[float, float] | None = None   # (when, factor)


def slowdown() -> float:
    """How many times its CPU time a short busy loop of this thread takes on the wall clock
    now: 1 on an idle machine, about the runnable processes per core on a busy one."""
    global _last
    if _last is not None and time.monotonic() - _last[0] < FRESH_S:
        return _last[1]
    factors = []
    for _ in range(SAMPLES):
        wall, cpu = time.monotonic(), time.thread_time()
        while time.thread_time() - cpu < SAMPLE_CPU_S:
            pass
        factors.append((time.monotonic() - wall) / (time.thread_time() - cpu))
    _last = (time.monotonic(), max(1.0, max(factors)))
    return _last[1]


def scaled(seconds: float) -> float:
    """``seconds`` of an idle machine, in seconds of this one now; whole seconds from 1 s up,
    since limits are printed and passed on command lines."""
    value = seconds * slowdown()
    return math.ceil(value) if seconds >= 1 else value
