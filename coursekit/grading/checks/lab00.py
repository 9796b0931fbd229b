"""Checks for lab00_setup: a timing helper, FLOP and byte counts with the roofline, and the
cost of moving data compared with the cost of computing on it.

Timing cannot be compared number for number between two runs, so the timing checks hand the
student's code a *pretend accelerator* with its own clock (:class:`_FakeAsyncDevice`): work is
queued when launched and only finished by ``sync()``, exactly like a GPU stream. On that clock
every correct timer returns the same number, and the usual mistakes (no warm-up, no
synchronisation, mean instead of median) return a different one.
"""
from __future__ import annotations

import time
from typing import Any

from ..program import Case, check, handed
from ..properties import edge, parameter, promise

# ---------------------------------------------------------------------------------------------
# references
# ---------------------------------------------------------------------------------------------


def _reference_time_it_factory():
    """``time_it`` on top of coursekit's :class:`~coursekit.hardware.timing.Timer`.

    ``inner=1`` (one call per reading) and the host clock, as the lab specifies; a ``sync``
    hook, when given, replaces the timer's own device synchronisation.
    """
    from coursekit.hardware.timing import Timer

    def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
        timer = Timer(fn, device=device, warmup=warmup, repeats=repeats, inner=1, clock=clock,
                      use_events=False)
        if sync is not None:
            timer._sync = sync  # the hook the lab's signature offers
        return timer.measure().median

    return time_it


def _reference_roofline():
    def gemm_flops(m, n, k):
        return 2 * m * n * k

    def gemm_bytes(m, n, k, dtype_bytes):
        return (m * k + k * n + m * n) * dtype_bytes

    def add_flops(numel):
        return numel

    def add_bytes(numel, dtype_bytes):
        return 3 * numel * dtype_bytes

    def roofline_time(flops, nbytes, peak_flops, bandwidth):
        return max(flops / peak_flops, nbytes / bandwidth)

    def roofline_bound(flops, nbytes, peak_flops, bandwidth):
        return "compute" if flops / peak_flops >= nbytes / bandwidth else "memory"

    return {"gemm_flops": gemm_flops, "gemm_bytes": gemm_bytes, "add_flops": add_flops,
            "add_bytes": add_bytes, "roofline_time": roofline_time,
            "roofline_bound": roofline_bound}


def _reference_transfer_vs_compute():
    time_it = _reference_time_it_factory()

    def transfer_vs_compute(x, op, device, timer=time_it):
        x_dev = x.to(device, copy=True)
        transfer_s = timer(lambda: x.to(device, copy=True), device=device)
        compute_s = timer(lambda: op(x_dev), device=device)
        return {"transfer_s": transfer_s, "compute_s": compute_s,
                "bottleneck": "transfer" if transfer_s > compute_s else "compute"}

    return transfer_vs_compute


# ---------------------------------------------------------------------------------------------
# lab00.time_it
# ---------------------------------------------------------------------------------------------


@handed  # the check's program hands it to the student's code
class _FakeAsyncDevice:
    """A pretend accelerator with its own clock.

    ``work()`` is what gets timed: it costs ``launch`` seconds of host time and queues
    ``durations[i]`` seconds of device work (the i-th call). ``sync()`` waits until the queue
    is empty; ``clock()`` reads the time. A timer that forgets to synchronise measures only
    the launch; one that skips the warm-up counts the slow first call.
    """

    def __init__(self, durations: list[float], launch: float = 1e-5):
        self.durations = list(durations)
        self.launch = launch
        self.now = 0.0
        self.busy_until = 0.0
        self.calls = 0

    def work(self) -> None:
        duration = self.durations[min(self.calls, len(self.durations) - 1)]
        self.calls += 1
        self.now += self.launch
        self.busy_until = max(self.busy_until, self.now) + duration

    def sync(self) -> None:
        self.now = max(self.now, self.busy_until)

    def clock(self) -> float:
        return self.now


def _run_fake(impl, durations, warmup, repeats):
    device = _FakeAsyncDevice(durations)
    seconds = impl(device.work, warmup=warmup, repeats=repeats, sync=device.sync,
                   clock=device.clock)
    return seconds, device.calls


def _run_fake_defaults(impl, durations):
    """``time_it`` with its default warm-up and repeats (3 and 10), the sync still given."""
    device = _FakeAsyncDevice(durations)
    seconds = impl(device.work, sync=device.sync, clock=device.clock)
    return seconds, device.calls


def _run_fake_default_sync(impl, durations, warmup, repeats):
    """``time_it`` without ``sync`` on a device called "cuda": the default sync must be
    ``synchronize(device)``. torch.cuda's ``is_available``/``synchronize`` stand in for a GPU
    for the duration of the call, so the default path is observed on a CPU-only grader."""
    import torch

    device = _FakeAsyncDevice(durations)
    saved = torch.cuda.is_available, torch.cuda.synchronize
    torch.cuda.is_available = lambda: True
    torch.cuda.synchronize = lambda *args, **kwargs: device.sync()
    try:
        seconds = impl(device.work, warmup=warmup, repeats=repeats, device="cuda",
                       clock=device.clock)
    finally:
        torch.cuda.is_available, torch.cuda.synchronize = saved
    return seconds, device.calls


_NAMES = ("returned seconds", "number of calls to fn")
_HINT_SYNC = ("time one call at a time: sync(); start = clock(); fn(); sync(); stop = clock() — "
              "without the second sync() you time the launch, not the work")
# A missing sync makes every reading the launch time, which fails the median cases too.
_ALSO_SYNC = "; if your result is only the launch time, the sync() after fn() is missing"


@check("lab00.time_it", reference=_reference_time_it_factory,
       forbid=("coursekit.hardware.timing", "coursekit.hardware.Timer",
               "coursekit.hardware.measure", "torch.utils.benchmark", "timeit"))
def time_it_program(impl: Any, rng):
    """time_it: warm-up, synchronisation, repeats and the median, on a pretend accelerator."""
    # 1. The first call is slow (lazy initialisation): it must be a warm-up call.
    for trial in range(2):
        warmup, repeats = int(rng.integers(1, 4)), int(rng.integers(1, 8))
        durations = [2.0] + list(rng.uniform(1e-3, 5e-3, size=warmup + repeats + 2))
        yield Case(f"slow first call, warmup={warmup}, repeats={repeats} (trial {trial})",
                   lambda d=durations, w=warmup, r=repeats: _run_fake(impl, d, w, r),
                   hint="run fn() `warmup` times untimed, then sync() before the first reading, "
                        "and return the median; " + _HINT_SYNC, rtol=1e-9, atol=1e-12, names=_NAMES)
    # 2. One timed call is 100x slower (an interrupt): the median ignores it, the mean does not.
    warmup, repeats = int(rng.integers(1, 3)), int(rng.choice([5, 7, 9]))
    durations = list(rng.uniform(1e-3, 2e-3, size=warmup + repeats))
    durations[warmup + int(rng.integers(0, repeats))] = 0.2
    yield Case(f"one slow timed call among {repeats}: the median ignores it",
               lambda: _run_fake(impl, durations, warmup, repeats),
               hint="return the median of the per-call durations, not their mean or total"
                    + _ALSO_SYNC,
               rtol=1e-9, atol=1e-12, names=_NAMES)
    # 3. An even number of repeats: the median is the mean of the two middle values.
    warmup, repeats = int(rng.integers(1, 3)), int(rng.choice([2, 4, 6]))
    durations = list(rng.uniform(1e-3, 9e-3, size=warmup + repeats))
    yield Case(f"even number of repeats ({repeats})",
               lambda: _run_fake(impl, durations, warmup, repeats),
               hint="for an even count the median averages the two middle values "
                    "(statistics.median and np.median do this)" + _ALSO_SYNC,
               rtol=1e-9, atol=1e-12, names=_NAMES)
    # 4. No warm-up asked for: then the slow first call is timed like any other.
    durations = [0.5] + list(rng.uniform(1e-3, 2e-3, size=3))
    yield Case("warmup=0, repeats=1 times exactly the first call",
               lambda: _run_fake(impl, durations, 0, 1),
               hint="call fn() exactly `warmup` times before measuring, no more" + _ALSO_SYNC,
               rtol=1e-9, atol=1e-12, names=_NAMES)
    # 5. The defaults, called: warmup=3 and repeats=10; the default sync is synchronize(device).
    durations = [2.0] + list(rng.uniform(1e-3, 5e-3, size=15))
    yield Case("defaults: time_it(fn, sync=..., clock=...) warms up 3 times and times 10 calls",
               lambda: _run_fake_defaults(impl, durations),
               hint="keep the defaults of the signature: warmup=3, repeats=10" + _ALSO_SYNC,
               rtol=1e-9, atol=1e-12, names=_NAMES)
    warmup, repeats = int(rng.integers(1, 3)), int(rng.integers(2, 6))
    durations = [2.0] + list(rng.uniform(1e-3, 5e-3, size=warmup + repeats + 2))
    yield Case(f"default sync on a GPU device: time_it(fn, warmup={warmup}, repeats={repeats}, "
               f"device='cuda', clock=...)",
               lambda: _run_fake_default_sync(impl, durations, warmup, repeats),
               hint="when sync is None, synchronise with synchronize(device) around each timed "
                    "call", rtol=1e-9, atol=1e-12, names=_NAMES)
    # 6. The real clock: a call that sleeps 20 ms must measure about 20 ms, in seconds.
    yield Case("time.sleep(0.02) measures between 0.02 and 0.25 seconds (real clock)",
               lambda: 0.02 <= float(impl(lambda: time.sleep(0.02), warmup=1, repeats=3)) < 0.25,
               hint="return seconds (not milliseconds), using time.perf_counter by default")
    # 7. Nothing to take the median of: refused before any call of fn (a warm-up included).
    def rejected(repeats):
        calls = []
        try:
            impl(lambda: calls.append(1), warmup=2, repeats=repeats)
        except ValueError:
            return {"raises ValueError": True, "calls of fn before it": len(calls)}
        return {"raises ValueError": False, "calls of fn before it": len(calls)}

    negative = -int(rng.integers(1, 4))
    for repeats in (0, negative):
        yield Case(f"repeats={repeats} raises ValueError, before fn is called (warmup=2)",
                   lambda r=repeats: rejected(r),
                   hint="raise ValueError when repeats < 1 (0 and negative numbers), first "
                        "thing: before the warm-up calls fn")


# ---------------------------------------------------------------------------------------------
# lab00.roofline
# ---------------------------------------------------------------------------------------------


@check("lab00.roofline", reference=_reference_roofline)
def roofline_program(impl: Any, rng):
    """FLOP and byte counts of a GEMM and an elementwise add, and the roofline bound."""
    for trial in range(3):
        m, n, k = (int(v) for v in rng.integers(1, 4097, size=3))
        dtype_bytes = int(rng.choice([2, 4, 8]))
        numel = int(rng.integers(1, 10**8))
        bandwidth = float(rng.uniform(2e10, 5e12))      # bytes/s
        # Place the ridge point (peak / bandwidth) so that every trial tests another side:
        # both ops compute-bound, both memory-bound, GEMM compute-bound and add memory-bound.
        add_intensity = 1 / (3 * dtype_bytes)
        gemm_intensity = 2 * m * n * k / ((m * k + k * n + m * n) * dtype_bytes)
        ridge = [add_intensity * float(rng.uniform(0.1, 0.9)),
                 gemm_intensity * float(rng.uniform(1.5, 10.0)),
                 (add_intensity * gemm_intensity) ** 0.5][trial]
        peak = bandwidth * ridge                         # FLOP/s
        shape = f"m={m}, n={n}, k={k}"
        yield Case(f"gemm_flops({shape})", lambda: impl["gemm_flops"](m, n, k),
                   hint="C = A @ B with A (m, k), B (k, n): each of the m*n outputs needs k "
                        "multiplies and k adds")
        yield Case(f"gemm_bytes({shape}, dtype_bytes={dtype_bytes})",
                   lambda: impl["gemm_bytes"](m, n, k, dtype_bytes),
                   hint="read A and B once, write C once; multiply elements by bytes per element")
        yield Case(f"add_flops({numel})", lambda: impl["add_flops"](numel),
                   hint="c = a + b: one addition per element")
        yield Case(f"add_bytes({numel}, dtype_bytes={dtype_bytes})",
                   lambda: impl["add_bytes"](numel, dtype_bytes),
                   hint="c = a + b reads two arrays and writes one")
        for what, flops, nbytes in (
                ("GEMM", 2 * m * n * k, (m * k + k * n + m * n) * dtype_bytes),
                ("add", numel, 3 * numel * dtype_bytes)):
            args = (flops, nbytes, peak, bandwidth)
            where = (f"{what} of trial {trial} (flops={flops:.3g}, bytes={nbytes:.3g}, "
                     f"peak={peak:.3g} FLOP/s, bandwidth={bandwidth:.3g} B/s)")
            yield Case(f"roofline_time, {where}", lambda a=args: impl["roofline_time"](*a),
                       hint="the slower of the two limits wins: max(compute time, memory time)",
                       rtol=1e-9)
            yield Case(f"roofline_bound, {where}", lambda a=args: impl["roofline_bound"](*a),
                       hint="'compute' when flops/peak_flops >= bytes/bandwidth, else 'memory'")
    # A tie, planted in every seed: compute time and memory time exactly equal (both 1 s).
    flops, nbytes = float(2 * m * n * k), float((m * k + k * n + m * n) * dtype_bytes)
    yield Case(f"roofline_bound at the ridge point: flops/peak_flops == bytes/bandwidth "
               f"(flops={flops:.3g}, bytes={nbytes:.3g})",
               lambda: impl["roofline_bound"](flops, nbytes, flops, nbytes),
               hint="a tie is 'compute': flops/peak_flops >= bytes/bandwidth")
    # A hair below the tie, planted too: 1 - 2**-40 s of arithmetic against 1 s of traffic is
    # 'memory' (math.isclose would call it a tie).
    yield Case("roofline_bound a hair below the ridge point: flops/peak_flops = 1 - 2**-40 s, "
               "bytes/bandwidth = 1 s",
               lambda: impl["roofline_bound"](2.0 ** 40 - 1, 2.0 ** 30, 2.0 ** 40, 2.0 ** 30),
               hint="compare the two times exactly: 'compute' only when flops/peak_flops >= "
                    "bytes/bandwidth, however close they are")


# ---------------------------------------------------------------------------------------------
# lab00.transfer_vs_compute
# ---------------------------------------------------------------------------------------------


@handed  # the check's program hands it to the student's code
class _RecordingTimer:
    """A timer that runs ``fn`` twice and reports a fixed time: the transfer time if ``fn`` did
    not call the op (so it must be the copy), the compute time if it did."""

    def __init__(self, op_inputs: list, transfer_s: float, compute_s: float):
        self.op_inputs, self.transfer_s, self.compute_s = op_inputs, transfer_s, compute_s
        self.devices: list[str] = []
        self.transfer_result: Any = None
        self.compute_inputs: list[list] = []

    def __call__(self, fn, *args, **kwargs):
        device = kwargs.get("device", args[2] if len(args) > 2 else None)
        self.devices.append(str(device))
        before = len(self.op_inputs)
        result = fn()
        fn()
        if len(self.op_inputs) > before:
            self.compute_inputs.append(self.op_inputs[before:])
            return self.compute_s
        self.transfer_result = result
        return self.transfer_s


@handed  # the check's program hands it to the student's code
class _FirstCallTimer:
    """A timer without warm-up: it times the first call of ``fn`` and nothing else, watching
    which aten ops read the host tensor ``x``. A copy of ``x`` made inside the timed compute
    (lazily, on the first call) shows up as an op reading ``x``."""

    def __init__(self, x: Any, op_inputs: list, transfer_s: float, compute_s: float):
        self.x, self.op_inputs = x, op_inputs
        self.transfer_s, self.compute_s = transfer_s, compute_s
        self.compute_reads: list[str] = []

    def __call__(self, fn, *args, **kwargs):
        import torch.utils._pytree as pytree
        from torch.utils._python_dispatch import TorchDispatchMode

        timer, reads = self, []

        class _ReadsOfX(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                leaves = pytree.tree_leaves((args, kwargs or {}))
                if any(leaf is timer.x for leaf in leaves):
                    reads.append(str(func.overloadpacket.__name__))
                return func(*args, **(kwargs or {}))

        before = len(self.op_inputs)
        with _ReadsOfX():
            fn()
        if len(self.op_inputs) > before:
            self.compute_reads.extend(reads)
            return self.compute_s
        return self.transfer_s


def _run_first_call(impl, x, device, transfer_s, compute_s):
    op_inputs: list = []

    def op(t):
        op_inputs.append(t)
        return t @ t.T

    timer = _FirstCallTimer(x, op_inputs, transfer_s, compute_s)
    impl(x, op, device, timer=timer)
    return {"the timed compute reads x (makes its copy while timed)": bool(timer.compute_reads)}


def _describe_transfer(result: Any, source: Any) -> dict[str, str]:
    import torch

    if not isinstance(result, torch.Tensor):
        return {"transfer returns": type(result).__name__}
    copied = result is not source and (
        result.device.type == "meta"
        or result.untyped_storage().data_ptr() != source.untyped_storage().data_ptr())
    return {"transfer returns": f"{result.dtype} tensor on {result.device}",
            "transfer makes a copy": "yes" if copied else "no"}


def _run_recorded(impl, x, device, transfer_s, compute_s):
    op_inputs: list = []

    def op(t):
        op_inputs.append(t)  # the tensor itself: keeps it alive, so ids stay distinct
        return t @ t.T

    timer = _RecordingTimer(op_inputs, transfer_s, compute_s)
    got = impl(x, op, device, timer=timer)
    observed = {"returned": dict(got) if isinstance(got, dict) else got,
                "op ran on": sorted({str(t.device) for t in op_inputs}),
                "devices given to the timer": sorted(set(timer.devices)),
                "timed compute reuses one input already on the device":
                    all(len({id(t) for t in calls}) == 1 for calls in timer.compute_inputs),
                "op is given a copy of x, not x":
                    all(t is not x and (t.device.type == "meta" or t.untyped_storage().data_ptr()
                                        != x.untyped_storage().data_ptr()) for t in op_inputs)}
    observed.update(_describe_transfer(timer.transfer_result, x))
    return observed


@check("lab00.transfer_vs_compute", reference=_reference_transfer_vs_compute)
def transfer_vs_compute_program(impl: Any, rng):
    """transfer_vs_compute: what is timed, on which device, and a consistent conclusion."""
    import torch

    # The pretend timer decides the numbers, so the conclusion has a known right answer.
    for trial, device in enumerate([torch.device("meta"), torch.device("meta"),
                                    torch.device("cpu"), torch.device("meta"),
                                    torch.device("cpu")]):
        rows, cols = int(rng.integers(2, 9)), int(rng.integers(2, 9))
        dtype = "float64" if trial in (1, 2) else "float32"   # the copy keeps x's dtype
        x = torch.from_numpy(rng.standard_normal((rows, cols)).astype(dtype))
        transfer_s, compute_s = (float(v) for v in rng.uniform(1e-4, 1e-2, size=2))
        if trial == 0:
            transfer_s, compute_s = max(transfer_s, compute_s) * 3, min(transfer_s, compute_s)
        elif trial == 1:
            transfer_s, compute_s = min(transfer_s, compute_s), max(transfer_s, compute_s) * 3
        elif trial == 3:  # a tie, planted in every seed: it is 'compute'
            compute_s = transfer_s
        elif trial == 4:  # the copy 1% slower: still 'transfer', however close
            transfer_s = compute_s * 1.01
        verdict = ("the copy is 1% slower" if trial == 4 else
                   "the copy is slower" if transfer_s > compute_s else
                   "a tie" if transfer_s == compute_s else "the compute is slower")
        yield Case(f"{dtype} x of shape ({rows}, {cols}) to {device}, timer reports "
                   f"transfer {transfer_s:.3g} s and compute {compute_s:.3g} s ({verdict})",
                   lambda x=x, d=device, t=transfer_s, c=compute_s: _run_recorded(impl, x, d, t, c),
                   hint="time x.to(device, copy=True) and op(x_on_device) separately, each as "
                        "timer(fn, device=device); the timed transfer returns the moved tensor; "
                        "make x_on_device once, before timing, so the compute time has no copy in "
                        "it; "
                        "'transfer' when transfer_s > compute_s, else 'compute'. Never write "
                        "'cpu' where `device` belongs")
    # A timer with no warm-up times the very first call: a device copy made lazily inside the
    # timed compute (on its first call, cached afterwards) would be billed to compute_s.
    rows, cols = int(rng.integers(2, 9)), int(rng.integers(2, 9))
    x = torch.from_numpy(rng.standard_normal((rows, cols)).astype("float32"))
    transfer_s, compute_s = (float(v) for v in rng.uniform(1e-4, 1e-2, size=2))
    yield Case(f"a timer that times the first call (no warm-up), x of shape ({rows}, {cols}) to "
               "meta: the timed compute copies nothing",
               lambda: _run_first_call(impl, x, torch.device("meta"), transfer_s, compute_s),
               hint="make the copy of x on the device once, before calling the timer, not inside "
                    "the timed function on its first call: a timer without warm-up (warmup=0) "
                    "would count that copy in compute_s")
    # The real timer (your time_it) on this machine: the conclusion must follow the numbers.
    n = int(rng.integers(64, 257))
    x = torch.from_numpy(rng.standard_normal((n, n)).astype("float32"))

    def consistent():
        got = impl(x, torch.sin, torch.device("cpu"))
        t, c = float(got["transfer_s"]), float(got["compute_s"])
        return {"both times positive": t > 0 and c > 0,
                "bottleneck follows the numbers":
                    got["bottleneck"] == ("transfer" if t > c else "compute")}

    yield Case(f"real measurement on the CPU ({n}x{n}, torch.sin)", consistent,
               hint="measure with the default timer (your time_it) and draw the conclusion from "
                    "the two numbers you measured, not from a fixed answer")


# ---------------------------------------------------------------------------------------------
# property tables (issue 27): each promise, parameter and edge of the exercises' texts, and the
# case that tests it (see coursekit.grading.properties)
# ---------------------------------------------------------------------------------------------

PROPERTIES = {
    "lab00.time_it": (
        parameter("fn", ": number of calls to fn"),
        parameter("warmup", "slow first call, warmup="),
        parameter("repeats", "even number of repeats"),
        parameter("device", "default sync on a GPU device"),
        parameter("sync", "one slow timed call among"),
        parameter("clock", "defaults: time_it(fn, sync=..., clock=...)"),
        promise("the warm-up calls are run first and not timed", "slow first call, warmup="),
        promise("sync() before starting and after fn(), around each timed call",
                "slow first call, warmup="),
        promise("fn is called exactly warmup + repeats times", ": number of calls to fn"),
        promise("the median of the durations, not their mean", "the median ignores it"),
        promise("defaults: warmup=3, repeats=10", "warms up 3 times and times 10 calls"),
        promise("sync None: synchronize(device) is the sync", "default sync on a GPU device"),
        promise("the result is in seconds, by time.perf_counter by default",
                "time.sleep(0.02) measures between 0.02 and 0.25 seconds"),
        promise("ValueError when repeats < 1", "repeats=0 raises ValueError"),
        promise("the ValueError comes before fn is called", "before fn is called"),
        promise("coursekit's own timer is not used", forbidden="coursekit.hardware.timing"),
        promise("timeit is not used", forbidden="timeit"),
        promise("torch.utils.benchmark is not used", forbidden="torch.utils.benchmark"),
        edge("an even number of repeats: the mean of the two middle values",
             "even number of repeats"),
        edge("warmup=0: the first call is timed", "warmup=0, repeats=1"),
        edge("repeats=0", "repeats=0 raises ValueError"),
        edge("a negative repeats", "repeats=-"),
    ),
    "lab00.roofline": (
        promise("gemm_flops is 2*m*n*k", "gemm_flops(m="),
        promise("gemm_bytes reads A and B once and writes C once", "gemm_bytes(m="),
        promise("add_flops is one FLOP per element", "add_flops("),
        promise("add_bytes is two arrays read and one written", "add_bytes("),
        promise("roofline_time is the larger of the compute and memory times",
                "roofline_time, GEMM of trial"),
        promise("roofline_bound is 'compute' when the arithmetic takes longer",
                "roofline_bound, add of trial 0"),
        promise("roofline_bound is 'memory' when the traffic takes longer",
                "roofline_bound, GEMM of trial 1"),
        edge("element sizes of 2, 4 and 8 bytes", "dtype_bytes="),
        edge("a tie between the two times is 'compute'", "roofline_bound at the ridge point"),
        edge("a time a hair below the other is not a tie", "a hair below the ridge point"),
    ),
    "lab00.transfer_vs_compute": (
        parameter("x", "x of shape"),
        promise("the copy keeps x's dtype (float64 stays float64)", "float64 x of shape"),
        parameter("op", "to meta, timer reports"),
        parameter("device", "to cpu, timer reports"),
        parameter("timer", "timer reports transfer"),
        promise("transfer_s times x.to(device, copy=True), which returns the copy",
                "to cpu, timer reports"),
        promise("compute_s times op on a copy made on device once, before timing",
                "to meta, timer reports"),
        promise("the timer is called as timer(fn, device=device)", "to meta, timer reports"),
        promise("the copy for compute is made before timing, not inside the timed function",
                "the timed compute copies nothing"),
        promise("'transfer' when transfer_s > compute_s", "(the copy is slower)"),
        edge("the copy only 1% slower is still 'transfer'", "(the copy is 1% slower)"),
        promise("op runs on a copy of x (x itself is never handed to op)",
                "to cpu, timer reports"),
        promise("'compute' otherwise", "(the compute is slower)"),
        promise("the default timer is time_it, and the conclusion follows its numbers",
                "real measurement on the CPU"),
        edge("the meta device (no data)", "to meta, timer reports"),
        edge("transfer_s == compute_s gives 'compute'", "(a tie)"),
    ),
}
