"""Lab 00: answers written from the released notebook's text alone (blind corpus, issue 27)."""

WRONG = {
    "time_it": [
        ("no sync() before start: work still queued from the warm-up (or the previous call) lands in the timed interval", '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
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
        start = clock()
        fn()
        sync()
        stop = clock()
        durations.append(stop - start)
    return statistics.median(durations)
'''),
        ("hand-rolled median takes the upper middle element for an even number of repeats", '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
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
        stop = clock()
        durations.append(stop - start)
    return sorted(durations)[len(durations) // 2]
'''),
        ("ignores the clock parameter and reads time.perf_counter() directly", '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
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
        stop = time.perf_counter()
        durations.append(stop - start)
    return statistics.median(durations)
'''),
        ("default sync drops the device: calls synchronize() with no argument, a no-op, so a GPU is never waited for", '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    if sync is None:
        sync = synchronize
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
    return statistics.median(durations)
'''),
    ],
    "roofline": [
        ("gemm_flops counts k multiplications and k - 1 additions per output, m*n*(2k-1), not the stated 2*m*n*k", '''def gemm_flops(m, n, k):
    """FLOPs of C = A @ B, A of shape (m, k), B of shape (k, n)."""
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
        ("roofline_time adds the arithmetic and memory times instead of taking the larger one", '''def gemm_flops(m, n, k):
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
        ("roofline_bound uses a strict >: a tie (arithmetic time equal to memory time) is called memory-bound", '''def gemm_flops(m, n, k):
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
    ],
    "transfer_vs_compute": [
        ("the timed transfer function makes the copy but does not return it", '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    def transfer():
        x.to(device, copy=True)  # the copy is what we time

    x_on_device = x.to(device, copy=True)

    def compute():
        return op(x_on_device)

    transfer_s = timer(transfer, device=device)
    compute_s = timer(compute, device=device)
    bottleneck = "transfer" if transfer_s > compute_s else "compute"
    return {"transfer_s": transfer_s, "compute_s": compute_s, "bottleneck": bottleneck}
'''),
        ("x.to(device) without copy=True: on the CPU (same device) no copy is made and x itself comes back", '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    def transfer():
        return x.to(device)

    x_on_device = x.to(device, copy=True)

    def compute():
        return op(x_on_device)

    transfer_s = timer(transfer, device=device)
    compute_s = timer(compute, device=device)
    bottleneck = "transfer" if transfer_s > compute_s else "compute"
    return {"transfer_s": transfer_s, "compute_s": compute_s, "bottleneck": bottleneck}
'''),
        ("device is not passed to the timer: timer(fn) instead of timer(fn, device=device)", '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    def transfer():
        return x.to(device, copy=True)

    x_on_device = x.to(device, copy=True)

    def compute():
        return op(x_on_device)

    transfer_s = timer(transfer)
    compute_s = timer(compute)
    bottleneck = "transfer" if transfer_s > compute_s else "compute"
    return {"transfer_s": transfer_s, "compute_s": compute_s, "bottleneck": bottleneck}
'''),
    ],
}

RIGHT = {
    "time_it": [
        ("explicit sort-and-average median, sync chosen by a conditional expression, durations from a comprehension", '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    wait = sync if sync is not None else (lambda: synchronize(device))

    def one_call():
        wait()
        start = clock()
        fn()
        wait()
        return clock() - start

    for _ in range(warmup):
        fn()
    durations = sorted([one_call() for _ in range(repeats)])
    middle = len(durations) // 2
    if len(durations) % 2:
        return durations[middle]
    return (durations[middle - 1] + durations[middle]) / 2
'''),
    ],
    "roofline": [
        ("counts built from small helpers (sum of operand sizes, separate arithmetic and memory times)", '''def _seconds(flops, nbytes, peak_flops, bandwidth):
    """(arithmetic time, memory time)."""
    return flops / peak_flops, nbytes / bandwidth


def gemm_flops(m, n, k):
    """FLOPs of C = A @ B, A of shape (m, k), B of shape (k, n)."""
    multiplies = m * n * k
    adds = m * n * k
    return multiplies + adds


def gemm_bytes(m, n, k, dtype_bytes):
    """Bytes moved by C = A @ B when A and B are read once and C is written once."""
    elements = sum((m * k, k * n, m * n))
    return dtype_bytes * elements


def add_flops(numel):
    """FLOPs of c = a + b with `numel` elements."""
    return int(numel)


def add_bytes(numel, dtype_bytes):
    """Bytes moved by c = a + b: two arrays read, one written."""
    reads, writes = 2 * numel, numel
    return (reads + writes) * dtype_bytes


def roofline_time(flops, nbytes, peak_flops, bandwidth):
    """Lower bound on the time in seconds: the slower of arithmetic and memory traffic."""
    return max(_seconds(flops, nbytes, peak_flops, bandwidth))


def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    """'compute' if the arithmetic takes at least as long as the memory traffic, else 'memory'."""
    arithmetic, memory = _seconds(flops, nbytes, peak_flops, bandwidth)
    return "memory" if arithmetic < memory else "compute"
'''),
    ],
    "transfer_vs_compute": [
        ("functools.partial for both timed functions, results collected in a dict first", '''import functools


def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    resident = x.to(device, copy=True)          # made once, before any timing
    timed = {
        "transfer_s": functools.partial(x.to, device, copy=True),
        "compute_s": functools.partial(op, resident),
    }
    result = {key: timer(fn, device=device) for key, fn in timed.items()}
    result["bottleneck"] = "compute" if result["transfer_s"] <= result["compute_s"] else "transfer"
    return result
'''),
    ],
}
