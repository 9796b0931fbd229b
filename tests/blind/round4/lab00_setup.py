"""Lab 00: answers written from the released notebook's text alone (blind corpus, round 4)."""

WRONG = {
    "time_it": [
        ("reads the stopwatch with time.perf_counter() directly: the `clock` parameter is accepted but never called, so a device with its own clock is timed on the wrong clock",
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
        sync = lambda: synchronize(device)
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
        ("median taken as the middle element of the sorted list, sorted(d)[len(d) // 2]: for an even number of repeats it returns the upper of the two middle values instead of their mean",
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
    durations.sort()
    return durations[len(durations) // 2]  # the middle reading
'''),
        ("always runs at least one warm-up call (range(max(1, warmup))): with warmup=0 fn is called repeats + 1 times and the slow first call is silently absorbed",
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
        sync = lambda: synchronize(device)
    # the very first call is never representative: always warm up at least once
    for _ in range(max(1, warmup)):
        fn()
    durations = []
    for _ in range(repeats):
        sync()
        start = clock()
        fn()
        sync()
        durations.append(clock() - start)
    return statistics.median(durations)
'''),
        ("raises ValueError for repeats <= 1 (thinks a median needs two readings): repeats=1, which the text allows, is refused",
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
    if repeats <= 1:
        raise ValueError("need at least two timed repeats to take a median")
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
    return statistics.median(durations)
'''),
    ],
    "roofline": [
        ("gemm_bytes counts C as read and written (BLAS's C = alpha*A@B + beta*C): (m*k + k*n + 2*m*n) elements instead of A and B read once and C written once",
         '''def gemm_flops(m, n, k):
    """FLOPs of C = A @ B, A of shape (m, k), B of shape (k, n)."""
    return 2 * m * n * k


def gemm_bytes(m, n, k, dtype_bytes):
    """Bytes moved by C = A @ B when A and B are read once and C is written once."""
    # A and B are read; C is read (beta * C) and written back
    return (m * k + k * n + 2 * m * n) * dtype_bytes


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
        ("add_bytes ignores its dtype_bytes parameter and assumes float32 (3 * numel * 4): right only for 4-byte elements",
         '''def gemm_flops(m, n, k):
    """FLOPs of C = A @ B, A of shape (m, k), B of shape (k, n)."""
    return 2 * m * n * k


def gemm_bytes(m, n, k, dtype_bytes):
    """Bytes moved by C = A @ B when A and B are read once and C is written once."""
    return (m * k + k * n + m * n) * dtype_bytes


def add_flops(numel):
    """FLOPs of c = a + b with `numel` elements."""
    return numel


FLOAT32_BYTES = 4


def add_bytes(numel, dtype_bytes):
    """Bytes moved by c = a + b: two arrays read, one written."""
    return 3 * numel * FLOAT32_BYTES


def roofline_time(flops, nbytes, peak_flops, bandwidth):
    """Lower bound on the time in seconds: the slower of arithmetic and memory traffic."""
    return max(flops / peak_flops, nbytes / bandwidth)


def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    """'compute' if the arithmetic takes at least as long as the memory traffic, else 'memory'."""
    return "compute" if flops / peak_flops >= nbytes / bandwidth else "memory"
'''),
        ("roofline_bound compares with a strict >: when the arithmetic time equals the memory time (the ridge point) it answers 'memory' instead of 'compute'",
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
    ],
    "transfer_vs_compute": [
        ("calls timer(fn) without device=device: the timer falls back to its default device and does not synchronise the device the work runs on",
         '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    def transfer():
        return x.to(device, copy=True)

    x_dev = x.to(device, copy=True)

    def compute():
        return op(x_dev)

    transfer_s = timer(transfer)
    compute_s = timer(compute)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ("copies with x.to(device) without copy=True: on the CPU (x already there) the 'transfer' returns x itself and copies nothing",
         '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    x_on_device = x.to(device)           # made once, before timing

    def copy_to_device():
        return x.to(device)

    def run_op():
        return op(x_on_device)

    transfer_s = timer(copy_to_device, device=device)
    compute_s = timer(run_op, device=device)
    bottleneck = "transfer" if transfer_s > compute_s else "compute"
    return {"transfer_s": transfer_s, "compute_s": compute_s, "bottleneck": bottleneck}
'''),
        ("bottleneck decided with >=: when the two times are equal it says 'transfer', the text says 'compute' unless transfer_s > compute_s",
         '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    resident = x.to(device, copy=True)

    transfer_s = timer(lambda: x.to(device, copy=True), device=device)
    compute_s = timer(lambda: op(resident), device=device)
    if transfer_s >= compute_s:
        bottleneck = "transfer"
    else:
        bottleneck = "compute"
    return {"transfer_s": transfer_s, "compute_s": compute_s, "bottleneck": bottleneck}
'''),
    ],
}

RIGHT = {
    "time_it": [
        ("hand-written median (sort, average the two middle readings for an even count), default sync as a named helper, while loops",
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
        raise ValueError(f"repeats must be at least 1, got {repeats!r}")

    def wait():
        if sync is None:
            synchronize(device)
        else:
            sync()

    done = 0
    while done < warmup:
        fn()
        done += 1

    readings = []
    while len(readings) < repeats:
        wait()
        t0 = clock()
        fn()
        wait()
        t1 = clock()
        readings.append(t1 - t0)

    readings = sorted(readings)
    mid = len(readings) // 2
    if len(readings) % 2 == 1:
        return readings[mid]
    return (readings[mid - 1] + readings[mid]) / 2
'''),
    ],
    "roofline": [
        ("counts built from a per-operand list; roofline_bound asks roofline_time which term won (max returns the arithmetic term on a tie)",
         '''def gemm_flops(m, n, k):
    """FLOPs of C = A @ B, A of shape (m, k), B of shape (k, n)."""
    multiplies = m * n * k
    adds = m * n * k
    return multiplies + adds


def gemm_bytes(m, n, k, dtype_bytes):
    """Bytes moved by C = A @ B when A and B are read once and C is written once."""
    elements = sum([m * k,    # A read
                    k * n,    # B read
                    m * n])   # C written
    return elements * dtype_bytes


def add_flops(numel):
    """FLOPs of c = a + b with `numel` elements."""
    return 1 * numel


def add_bytes(numel, dtype_bytes):
    """Bytes moved by c = a + b: two arrays read, one written."""
    reads, writes = 2 * numel, numel
    return (reads + writes) * dtype_bytes


def roofline_time(flops, nbytes, peak_flops, bandwidth):
    """Lower bound on the time in seconds: the slower of arithmetic and memory traffic."""
    arithmetic = flops / peak_flops
    memory = nbytes / bandwidth
    return max(arithmetic, memory)


def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    """'compute' if the arithmetic takes at least as long as the memory traffic, else 'memory'."""
    arithmetic = flops / peak_flops
    limit = roofline_time(flops, nbytes, peak_flops, bandwidth)
    return "compute" if limit == arithmetic else "memory"
'''),
    ],
    "transfer_vs_compute": [
        ("named inner functions, the resident copy also made with copy=True, both timings under torch.no_grad(), the verdict through a conditional on a dict",
         '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""

    def ship():
        copy = x.to(device, copy=True)
        return copy

    with torch.no_grad():
        on_device = x.to(device, copy=True)   # once, before any timing

        def work():
            return op(on_device)

        result = {
            "transfer_s": timer(ship, device=device),
            "compute_s": timer(work, device=device),
        }
    result["bottleneck"] = ("transfer" if result["transfer_s"] > result["compute_s"]
                            else "compute")
    return result
'''),
    ],
}
