"""Lab 00: answers written from the released notebook's text alone (blind corpus, round 6)."""

WRONG = {
    "time_it": [
        ("returns the mean of the timed calls instead of the median: one slow timed call moves the result", '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    if sync is None:
        def sync():
            synchronize(device)
    for _ in range(warmup):
        fn()
    total = 0.0
    for _ in range(repeats):
        sync()
        start = clock()
        fn()
        sync()
        total += clock() - start
    return total / repeats
'''),
        ("reads the stop time before the second sync(): on an asynchronous device it times the launch, not the work", '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
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
        stop = clock()
        sync()
        durations.append(stop - start)
    return statistics.median(durations)
'''),
        ("reads time.perf_counter() directly and ignores the `clock` parameter: a device with its own clock is timed on the host's", '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    if sync is None:
        def sync():
            synchronize(device)
    for _ in range(warmup):
        fn()
    durations = []
    for _ in range(repeats):
        sync()
        start = time.perf_counter()
        fn()
        sync()
        durations.append(time.perf_counter() - start)
    return statistics.median(durations)
'''),
        ("median by hand as sorted(d)[len(d) // 2]: for an even number of repeats it returns the upper middle value, not the mean of the two", '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
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
    return durations[len(durations) // 2]
'''),
    ],
    "roofline": [
        ("roofline_time adds the arithmetic time and the memory time instead of taking the larger of the two", '''def gemm_flops(m, n, k):
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
    return flops / peak_flops + nbytes / bandwidth


def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    """'compute' if the arithmetic takes at least as long as the memory traffic, else 'memory'."""
    return "compute" if flops / peak_flops >= nbytes / bandwidth else "memory"
'''),
        ("roofline_bound compares with a strict >: when the arithmetic time equals the memory time it says 'memory', the text says 'compute'", '''def gemm_flops(m, n, k):
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
        ("gemm_flops counts the exact k multiplications and k - 1 additions per output, m*n*(2k - 1), not the 2*m*n*k the text defines", '''def gemm_flops(m, n, k):
    """FLOPs of C = A @ B, A of shape (m, k), B of shape (k, n)."""
    # k products and k - 1 additions for each of the m * n outputs
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
    ],
    "transfer_vs_compute": [
        ("copies with x.to(device) without copy=True: on the CPU nothing is copied and the 'copy' is x itself", '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    def transfer():
        return x.to(device)

    resident = x.to(device, copy=True)

    def compute():
        return op(resident)

    transfer_s = timer(transfer, device=device)
    compute_s = timer(compute, device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ("the transfer function makes the copy but does not return it (returns None)", '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    def transfer():
        x.to(device, copy=True)

    resident = x.to(device, copy=True)

    def compute():
        return op(resident)

    transfer_s = timer(transfer, device=device)
    compute_s = timer(compute, device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ("calls timer(fn) without device=device: the timer is never told the device, so its default sync does not wait for the work on `device`", '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    def transfer():
        return x.to(device, copy=True)

    resident = x.to(device, copy=True)

    def compute():
        return op(resident)

    transfer_s = timer(transfer)
    compute_s = timer(compute)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
    ],
}

RIGHT = {
    "time_it": [
        ("a while loop that fills the list, functools.partial for the default sync, and the median computed by hand (mean of the two middle values for an even count)", '''import functools


def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    wait = sync if sync is not None else functools.partial(synchronize, device)
    for _ in range(warmup):
        fn()
    durations = []
    while len(durations) < repeats:
        wait()
        t0 = clock()
        fn()
        wait()
        t1 = clock()
        durations.append(t1 - t0)
    durations.sort()
    mid = repeats // 2
    if repeats % 2:
        return durations[mid]
    return (durations[mid - 1] + durations[mid]) / 2
'''),
    ],
    "roofline": [
        ("a shared helper returns both times, a conditional expression replaces max(), and the bound asks whether the memory time is the larger one (ties still 'compute')", '''def gemm_flops(m, n, k):
    """FLOPs of C = A @ B, A of shape (m, k), B of shape (k, n)."""
    multiply_adds = m * n * k
    return multiply_adds * 2


def gemm_bytes(m, n, k, dtype_bytes):
    """Bytes moved by C = A @ B when A and B are read once and C is written once."""
    elements = sum((m * k, k * n, m * n))
    return elements * dtype_bytes


def add_flops(numel):
    """FLOPs of c = a + b with `numel` elements."""
    return 1 * numel


def add_bytes(numel, dtype_bytes):
    """Bytes moved by c = a + b: two arrays read, one written."""
    reads, writes = 2, 1
    return (reads + writes) * numel * dtype_bytes


def _two_times(flops, nbytes, peak_flops, bandwidth):
    return flops / peak_flops, nbytes / bandwidth


def roofline_time(flops, nbytes, peak_flops, bandwidth):
    """Lower bound on the time in seconds: the slower of arithmetic and memory traffic."""
    compute_s, memory_s = _two_times(flops, nbytes, peak_flops, bandwidth)
    return compute_s if compute_s >= memory_s else memory_s


def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    """'compute' if the arithmetic takes at least as long as the memory traffic, else 'memory'."""
    compute_s, memory_s = _two_times(flops, nbytes, peak_flops, bandwidth)
    return "memory" if memory_s > compute_s else "compute"
'''),
    ],
    "transfer_vs_compute": [
        ("functools.partial for both timed functions (x.to with copy=True, op on a resident copy) and the result built from a dict comprehension", '''import functools


def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    resident = x.to(device, copy=True)  # made once, before any timing
    jobs = {"transfer_s": functools.partial(x.to, device, copy=True),
            "compute_s": functools.partial(op, resident)}
    result = {key: timer(job, device=device) for key, job in jobs.items()}
    result["bottleneck"] = "transfer" if result["transfer_s"] > result["compute_s"] else "compute"
    return result
'''),
    ],
}
