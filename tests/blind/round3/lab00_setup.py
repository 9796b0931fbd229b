"""Lab 00: answers written from the released notebook's text alone (blind corpus, round 3).

The written answer `why_gpus` is graded by hand and has no entries here.
"""

WRONG = {
    "time_it": [
        ("syncs only after fn, not before the clock starts: the work the warm-up left queued on an "
         "asynchronous device is billed to the first timed call (the median moves for repeats of 1 or 2)",
         '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls.

    Args:
        fn: the work, a function without arguments.
        warmup: calls to run and throw away first.
        repeats: timed calls; the median of their durations is returned.
        device: the device `fn` runs on; used for the default `sync`.
        sync: waits until the device has finished; `synchronize(device)` when None.
        clock: returns the current time in seconds.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    if sync is None:
        def sync():
            synchronize(device)
    for _ in range(warmup):
        fn()
    durations = []
    for _ in range(repeats):
        start = clock()
        fn()
        sync()  # wait for the work of this call before stopping the clock
        durations.append(clock() - start)
    return statistics.median(durations)
'''),
        ("always runs at least one warm-up call (range(max(1, warmup))): with warmup=0 fn is called "
         "repeats + 1 times",
         '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls.

    Args:
        fn: the work, a function without arguments.
        warmup: calls to run and throw away first.
        repeats: timed calls; the median of their durations is returned.
        device: the device `fn` runs on; used for the default `sync`.
        sync: waits until the device has finished; `synchronize(device)` when None.
        clock: returns the current time in seconds.
    """
    if repeats < 1:
        raise ValueError("repeats must be >= 1")
    if sync is None:
        sync = lambda: synchronize(device)  # noqa: E731
    # the very first call is always the slow one, so never time it
    for _ in range(max(1, warmup)):
        fn()
    durations = []
    for _ in range(repeats):
        sync()
        start = clock()
        fn()
        sync()
        stop = clock()
        durations.append(stop - start)
    return statistics.median(durations)
'''),
        ("median by hand as sorted(d)[len(d) // 2]: for an even number of repeats it returns the upper "
         "middle value instead of the mean of the two middle values",
         '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls.

    Args:
        fn: the work, a function without arguments.
        warmup: calls to run and throw away first.
        repeats: timed calls; the median of their durations is returned.
        device: the device `fn` runs on; used for the default `sync`.
        sync: waits until the device has finished; `synchronize(device)` when None.
        clock: returns the current time in seconds.
    """
    if repeats < 1:
        raise ValueError("need at least one timed call")
    if sync is None:
        def sync():
            synchronize(device)
    for _ in range(warmup):
        fn()
    durations = []
    for _ in range(repeats):
        sync()
        start = clock()
        fn()
        sync()
        durations.append(clock() - start)
    durations.sort()
    return durations[len(durations) // 2]  # the middle reading
'''),
    ],
    "roofline": [
        ("gemm_bytes: operator precedence, `m * k + k * n + m * n * dtype_bytes`: only C is scaled by the "
         "element size (right only for 1-byte elements)",
         '''def gemm_flops(m, n, k):
    """FLOPs of C = A @ B, A of shape (m, k), B of shape (k, n)."""
    return 2 * m * n * k


def gemm_bytes(m, n, k, dtype_bytes):
    """Bytes moved by C = A @ B when A and B are read once and C is written once."""
    return m * k + k * n + m * n * dtype_bytes


def add_flops(numel):
    """FLOPs of c = a + b with `numel` elements."""
    return numel


def add_bytes(numel, dtype_bytes):
    """Bytes moved by c = a + b: two arrays read, one written."""
    return 3 * numel * dtype_bytes


def roofline_time(flops, nbytes, peak_flops, bandwidth):
    """Lower bound on the time in seconds: the slower of arithmetic and memory traffic."""
    return max(flops / peak_flops, nbytes / bandwidth)


def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    """'compute' if the arithmetic takes at least as long as the memory traffic, else 'memory'."""
    return "compute" if flops / peak_flops >= nbytes / bandwidth else "memory"
'''),
        ("roofline_bound compares with a strict >: when the arithmetic time equals the memory time (an "
         "operation exactly at the ridge point) it says 'memory' instead of 'compute'",
         '''def gemm_flops(m, n, k):
    """FLOPs of C = A @ B, A of shape (m, k), B of shape (k, n)."""
    return 2 * m * n * k


def gemm_bytes(m, n, k, dtype_bytes):
    """Bytes moved by C = A @ B when A and B are read once and C is written once."""
    return (m * k + k * n + m * n) * dtype_bytes


def add_flops(numel):
    """FLOPs of c = a + b with `numel` elements."""
    return numel


def add_bytes(numel, dtype_bytes):
    """Bytes moved by c = a + b: two arrays read, one written."""
    return 3 * numel * dtype_bytes


def roofline_time(flops, nbytes, peak_flops, bandwidth):
    """Lower bound on the time in seconds: the slower of arithmetic and memory traffic."""
    return max(flops / peak_flops, nbytes / bandwidth)


def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    """'compute' if the arithmetic takes at least as long as the memory traffic, else 'memory'."""
    compute_s = flops / peak_flops
    memory_s = nbytes / bandwidth
    if compute_s > memory_s:
        return "compute"
    return "memory"
'''),
        ("add_flops counts 2 FLOPs per element (a multiply-add, as in GEMM) instead of one addition",
         '''def gemm_flops(m, n, k):
    """FLOPs of C = A @ B, A of shape (m, k), B of shape (k, n)."""
    return 2 * m * n * k


def gemm_bytes(m, n, k, dtype_bytes):
    """Bytes moved by C = A @ B when A and B are read once and C is written once."""
    return (m * k + k * n + m * n) * dtype_bytes


def add_flops(numel):
    """FLOPs of c = a + b with `numel` elements."""
    return 2 * numel  # one FMA per element, counted as two FLOPs like the GEMM


def add_bytes(numel, dtype_bytes):
    """Bytes moved by c = a + b: two arrays read, one written."""
    return 3 * numel * dtype_bytes


def roofline_time(flops, nbytes, peak_flops, bandwidth):
    """Lower bound on the time in seconds: the slower of arithmetic and memory traffic."""
    return max(flops / peak_flops, nbytes / bandwidth)


def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    """'compute' if the arithmetic takes at least as long as the memory traffic, else 'memory'."""
    return "compute" if flops / peak_flops >= nbytes / bandwidth else "memory"
'''),
    ],
    "transfer_vs_compute": [
        ("the compute function applies op to the host tensor x, not to the copy made on device: op never "
         "runs on `device`",
         '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    x_dev = x.to(device, copy=True)  # made once, before timing

    def transfer():
        return x.to(device, copy=True)

    def compute():
        return op(x)

    transfer_s = timer(transfer, device=device)
    compute_s = timer(compute, device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ("copies with x.to(device) without copy=True: when x is already on `device` (the CPU) nothing is "
         "copied and the 'transfer' returns x itself",
         '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    x_dev = x.to(device)

    def transfer():
        return x.to(device)

    def compute():
        return op(x_dev)

    transfer_s = timer(transfer, device=device)
    compute_s = timer(compute, device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ("a tie (transfer_s == compute_s) is called 'transfer' (>= instead of >)",
         '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    on_device = x.to(device, copy=True)
    transfer_s = timer(lambda: x.to(device, copy=True), device=device)
    compute_s = timer(lambda: op(on_device), device=device)
    bottleneck = "transfer" if transfer_s >= compute_s else "compute"
    return {"transfer_s": transfer_s, "compute_s": compute_s, "bottleneck": bottleneck}
'''),
        ("the timer is called without device=device: time_it falls back to synchronize(None) and never "
         "waits for an asynchronous device",
         '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    on_device = x.to(device, copy=True)

    def copy_to_device():
        return x.to(device, copy=True)

    def run_op():
        return op(on_device)

    transfer_s = timer(copy_to_device)
    compute_s = timer(run_op)
    return {
        "transfer_s": transfer_s,
        "compute_s": compute_s,
        "bottleneck": "transfer" if transfer_s > compute_s else "compute",
    }
'''),
    ],
}

RIGHT = {
    "time_it": [
        ("default sync via functools.partial, loops with explicit readings, median computed by hand "
         "(mean of the two middle values for an even count)",
         '''import functools


def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls.

    Args:
        fn: the work, a function without arguments.
        warmup: calls to run and throw away first.
        repeats: timed calls; the median of their durations is returned.
        device: the device `fn` runs on; used for the default `sync`.
        sync: waits until the device has finished; `synchronize(device)` when None.
        clock: returns the current time in seconds.
    """
    if repeats < 1:
        raise ValueError(f"time_it needs repeats >= 1, not {repeats}")
    wait = sync if sync is not None else functools.partial(synchronize, device)
    calls = 0
    while calls < warmup:
        fn()
        calls += 1
    readings = []
    while len(readings) < repeats:
        wait()
        t0 = clock()
        fn()
        wait()
        t1 = clock()
        readings.append(t1 - t0)
    readings = sorted(readings)
    half = len(readings) // 2
    if len(readings) % 2:
        return readings[half]
    return (readings[half - 1] + readings[half]) / 2
'''),
    ],
    "roofline": [
        ("element counts through small helpers, the bound decided from the two roofline terms computed "
         "once",
         '''def _elements(*shapes):
    """Number of elements of all the given 2-D shapes together."""
    return sum(rows * cols for rows, cols in shapes)


def gemm_flops(m, n, k):
    """FLOPs of C = A @ B, A of shape (m, k), B of shape (k, n)."""
    multiplies = m * n * k
    adds = m * n * k
    return multiplies + adds


def gemm_bytes(m, n, k, dtype_bytes):
    """Bytes moved by C = A @ B when A and B are read once and C is written once."""
    return dtype_bytes * _elements((m, k), (k, n), (m, n))


def add_flops(numel):
    """FLOPs of c = a + b with `numel` elements."""
    return numel


def add_bytes(numel, dtype_bytes):
    """Bytes moved by c = a + b: two arrays read, one written."""
    reads, writes = 2 * numel, numel
    return (reads + writes) * dtype_bytes


def _terms(flops, nbytes, peak_flops, bandwidth):
    return flops / peak_flops, nbytes / bandwidth


def roofline_time(flops, nbytes, peak_flops, bandwidth):
    """Lower bound on the time in seconds: the slower of arithmetic and memory traffic."""
    compute_s, memory_s = _terms(flops, nbytes, peak_flops, bandwidth)
    return compute_s if compute_s >= memory_s else memory_s


def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    """'compute' if the arithmetic takes at least as long as the memory traffic, else 'memory'."""
    compute_s, memory_s = _terms(flops, nbytes, peak_flops, bandwidth)
    return "memory" if compute_s < memory_s else "compute"
'''),
    ],
    "transfer_vs_compute": [
        ("the device copy made once with torch.no_grad(), the two timed functions and the verdict from a "
         "small table of results",
         '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    with torch.no_grad():
        resident = x.to(device, copy=True)   # already on the device before any timing

    jobs = {
        "transfer_s": lambda: x.to(device, copy=True),
        "compute_s": lambda: op(resident),
    }
    result = {name: timer(job, device=device) for name, job in jobs.items()}
    result["bottleneck"] = "transfer" if result["transfer_s"] > result["compute_s"] else "compute"
    return result
'''),
    ],
}
