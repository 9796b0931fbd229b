"""Lab 00: answers written from the released notebook's text alone (blind corpus, round 7)."""

WRONG = {
    "time_it": [
        ('checks repeats < 1 only after the warm-up loop, so fn() is still called `warmup` times before the ValueError: the bad argument is not rejected up front and fn runs although nothing is timed', '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls.

    Args:
        fn: the work, a function without arguments.
        warmup: calls to run and throw away first.
        repeats: timed calls; the median of their durations is returned.
        device: the device `fn` runs on; used for the default `sync`.
        sync: waits until the device has finished; `synchronize(device)` when None.
        clock: returns the current time in seconds.
    """
    if sync is None:
        sync = lambda: synchronize(device)
    for _ in range(warmup):
        fn()
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
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
        ('statistics.median_low instead of statistics.median: for an even number of repeats it returns the lower middle value, not the mean of the two middle ones the text asks for', '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError("repeats must be >= 1")
    if sync is None:
        sync = lambda: synchronize(device)
    for _ in range(warmup):
        fn()
    durations = []
    for _ in range(repeats):
        sync()
        start = clock()
        fn()
        sync()
        stop = clock()
        durations.append(stop - start)
    # median_low always returns one of the measured values, never an average of two
    return statistics.median_low(durations)
'''),
        ('no sync() before the clock starts (only after fn): the work queued by the warm-up calls, or a previous call, lands inside the first timed reading on an asynchronous device; breaks step 2 "sync(); start = clock()"', '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError("repeats must be >= 1")
    if sync is None:
        sync = lambda: synchronize(device)
    for _ in range(warmup):
        fn()
    durations = []
    for _ in range(repeats):
        start = clock()
        fn()
        sync()          # wait for the device before reading the clock
        durations.append(clock() - start)
    return statistics.median(durations)
'''),
        ('reports the best (minimum) of the timed calls, the "best of three" habit of section 1, instead of their median: a robust statistic, but not the median the text asks to return', '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError("repeats must be >= 1")
    if sync is None:
        sync = lambda: synchronize(device)
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeats):
        sync()
        start = clock()
        fn()
        sync()
        stop = clock()
        best = min(best, stop - start)   # outliers only ever slow a call down
    return best
'''),
    ],
    "roofline": [
        ('roofline_bound uses a strict ">": when the arithmetic time exactly equals the memory time (an operation at the ridge point) it answers "memory", but the text says "compute" when arithmetic takes at least as long', '''def gemm_flops(m, n, k):
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
    return "compute" if flops / peak_flops > nbytes / bandwidth else "memory"
'''),
        ('gemm_flops counts the exact operations m*n*(2k-1) (k multiplies, k-1 adds per dot product) instead of the 2*m*n*k the text defines; off by m*n, which looks negligible for large k', '''def gemm_flops(m, n, k):
    """FLOPs of C = A @ B, A of shape (m, k), B of shape (k, n)."""
    # each output is a dot product of length k: k multiplications and k - 1 additions
    return m * n * (2 * k - 1)


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
    return "compute" if flops / peak_flops >= nbytes / bandwidth else "memory"
'''),
        ('roofline_time adds the two times (no overlap of compute and memory traffic) instead of taking the max; the text defines the bound as max(FLOPs/peak, bytes/bandwidth)', '''def gemm_flops(m, n, k):
    """FLOPs of C = A @ B, A of shape (m, k), B of shape (k, n)."""
    return 2 * m * n * k


def gemm_bytes(m, n, k, dtype_bytes):
    """Bytes moved by C = A @ B when A and B are read once and C is written once."""
    return dtype_bytes * (m * k + k * n + m * n)


def add_flops(numel):
    """FLOPs of c = a + b with `numel` elements."""
    return numel


def add_bytes(numel, dtype_bytes):
    """Bytes moved by c = a + b: two arrays read, one written."""
    return 3 * numel * dtype_bytes


def roofline_time(flops, nbytes, peak_flops, bandwidth):
    """Lower bound on the time in seconds: the slower of arithmetic and memory traffic."""
    compute_s = flops / peak_flops
    memory_s = nbytes / bandwidth
    return compute_s + memory_s     # the data has to arrive before it can be used


def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    """'compute' if the arithmetic takes at least as long as the memory traffic, else 'memory'."""
    return "compute" if flops / peak_flops >= nbytes / bandwidth else "memory"
'''),
    ],
    "transfer_vs_compute": [
        ('the copy function is a def whose body is an expression statement, so it returns None: the copy is made and timed but not returned, breaking "copies x ... and returns the copy"', '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    def transfer():
        x.to(device, copy=True)

    x_dev = x.to(device, copy=True)

    def compute():
        return op(x_dev)

    transfer_s = timer(transfer, device=device)
    compute_s = timer(compute, device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ('ties go the wrong way: ">=" makes equal times a "transfer" bottleneck, while the text says "transfer" only if transfer_s > compute_s, else "compute"', '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    x_dev = x.to(device, copy=True)
    transfer_s = timer(lambda: x.to(device, copy=True), device=device)
    compute_s = timer(lambda: op(x_dev), device=device)
    bottleneck = "transfer" if transfer_s >= compute_s else "compute"
    return {"transfer_s": transfer_s, "compute_s": compute_s, "bottleneck": bottleneck}
'''),
        ('the copy is cast to float32 on the way ("GPUs like float32"): a float64 x comes back as a float32 tensor, so the timed function no longer returns a copy of x (dtype not kept) and the transfer moves half the bytes', '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    x_dev = x.to(device, dtype=torch.float32, copy=True)
    transfer_s = timer(lambda: x.to(device, dtype=torch.float32, copy=True), device=device)
    compute_s = timer(lambda: op(x_dev), device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
    ],
}

RIGHT = {
    "time_it": [
        ('computes the median by hand from a sorted list (middle value, or the mean of the two middle values) instead of calling statistics.median, and builds the default sync with functools.partial', '''import functools


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
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    wait = functools.partial(synchronize, device) if sync is None else sync

    for _ in range(warmup):
        fn()

    durations = []
    while len(durations) < repeats:
        wait()
        start = clock()
        fn()
        wait()
        stop = clock()
        durations.append(stop - start)

    ordered = sorted(durations)
    half = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[half]
    return (ordered[half - 1] + ordered[half]) / 2
'''),
    ],
    "roofline": [
        ('writes the byte counts as element counts times dtype_bytes via sum(), picks the bound by indexing a tuple with the comparison, and defines roofline_time through the two named times', '''def gemm_flops(m, n, k):
    """FLOPs of C = A @ B, A of shape (m, k), B of shape (k, n)."""
    multiplies = adds = m * n * k
    return multiplies + adds


def gemm_bytes(m, n, k, dtype_bytes):
    """Bytes moved by C = A @ B when A and B are read once and C is written once."""
    elements = sum((m * k, k * n, m * n))   # A, B read; C written
    return elements * dtype_bytes


def add_flops(numel):
    """FLOPs of c = a + b with `numel` elements."""
    return 1 * numel


def add_bytes(numel, dtype_bytes):
    """Bytes moved by c = a + b: two arrays read, one written."""
    reads, writes = 2 * numel, numel
    return (reads + writes) * dtype_bytes


def _times(flops, nbytes, peak_flops, bandwidth):
    return flops / peak_flops, nbytes / bandwidth


def roofline_time(flops, nbytes, peak_flops, bandwidth):
    """Lower bound on the time in seconds: the slower of arithmetic and memory traffic."""
    arithmetic_s, memory_s = _times(flops, nbytes, peak_flops, bandwidth)
    return arithmetic_s if arithmetic_s >= memory_s else memory_s


def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    """'compute' if the arithmetic takes at least as long as the memory traffic, else 'memory'."""
    arithmetic_s, memory_s = _times(flops, nbytes, peak_flops, bandwidth)
    return ("memory", "compute")[arithmetic_s >= memory_s]
'''),
    ],
    "transfer_vs_compute": [
        ('named inner functions and functools.partial instead of lambdas; the device copy is made once under torch.no_grad() before timing, and the timer is always called with device= as a keyword', '''import functools


def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    def copy_to_device(tensor):
        return tensor.to(device, copy=True)

    with torch.no_grad():
        resident = copy_to_device(x)        # made once, before any timing

    timings = {
        "transfer_s": timer(functools.partial(copy_to_device, x), device=device),
        "compute_s": timer(functools.partial(op, resident), device=device),
    }
    slower_is_transfer = timings["transfer_s"] > timings["compute_s"]
    timings["bottleneck"] = "transfer" if slower_is_transfer else "compute"
    return timings
'''),
    ],
}
