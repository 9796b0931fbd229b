"""Lab 00: answers written from the released notebook's text alone (blind corpus, round 2)."""

WRONG = {
    "time_it": [
        ("median taken as the middle element of the sorted list: for an even count it is the upper "
         "middle value, not the mean of the two middle ones",
         '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
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
    durations.sort()
    return durations[len(durations) // 2]
'''),
        ("synchronises only after fn(), not before starting the clock, so work still queued from "
         "the warm-up (or the previous call) is charged to the first timed call",
         '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    if sync is None:
        sync = lambda: synchronize(device)
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
        ("reads time.perf_counter() directly instead of the `clock` argument (the parameter is ignored)",
         '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
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
        ("always does at least one warm-up call 'to be safe': warmup=0 still calls fn once untimed, "
         "so fn runs warmup + repeats + 1 times",
         '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    if sync is None:
        sync = lambda: synchronize(device)
    # the first call is always slow, so warm up at least once
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
    ],
    "roofline": [
        ("roofline_bound uses a strict comparison: an exact tie (arithmetic time == memory time) "
         "gives 'memory' although the text says 'compute' when it is at least the memory time",
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
    if flops / peak_flops > nbytes / bandwidth:
        return "compute"
    return "memory"
'''),
        ("roofline_time adds the arithmetic time and the memory time (as if they could not overlap) "
         "instead of taking the larger of the two",
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
    compute_time = flops / peak_flops
    memory_time = nbytes / bandwidth
    return compute_time + memory_time


def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    """'compute' if the arithmetic takes at least as long as the memory traffic, else 'memory'."""
    return "compute" if flops / peak_flops >= nbytes / bandwidth else "memory"
'''),
        ("add_bytes counts only the two arrays read and forgets the write of c (2*N instead of 3*N "
         "elements)",
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
    return 2 * numel * dtype_bytes


def roofline_time(flops, nbytes, peak_flops, bandwidth):
    """Lower bound on the time in seconds: the slower of arithmetic and memory traffic."""
    return max(flops / peak_flops, nbytes / bandwidth)


def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    """'compute' if the arithmetic takes at least as long as the memory traffic, else 'memory'."""
    return "compute" if flops / peak_flops >= nbytes / bandwidth else "memory"
'''),
    ],
    "transfer_vs_compute": [
        ("the copying function makes the copy but does not return it (no `return` in the def)",
         '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    def transfer():
        x.to(device, copy=True)

    x_device = x.to(device, copy=True)

    def compute():
        return op(x_device)

    transfer_s = timer(transfer, device=device)
    compute_s = timer(compute, device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ("the compute function moves x to the device inside the timed call, so compute_s also "
         "includes a transfer",
         '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    transfer_s = timer(lambda: x.to(device, copy=True), device=device)
    compute_s = timer(lambda: op(x.to(device)), device=device)
    bottleneck = "transfer" if transfer_s > compute_s else "compute"
    return {"transfer_s": transfer_s, "compute_s": compute_s, "bottleneck": bottleneck}
'''),
        ("copies with x.to(device) without copy=True: on the CPU (or when x is already on device) "
         "that returns x itself and nothing is copied",
         '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    x_on_device = x.to(device)
    transfer_s = timer(lambda: x.to(device), device=device)
    compute_s = timer(lambda: op(x_on_device), device=device)
    bottleneck = "transfer" if transfer_s > compute_s else "compute"
    return {"transfer_s": transfer_s, "compute_s": compute_s, "bottleneck": bottleneck}
'''),
    ],
}

RIGHT = {
    "time_it": [
        ("a def for the default sync, and the median computed by hand from the sorted durations "
         "(mean of the two middle values for an even count)",
         '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    if sync is None:
        def sync():
            synchronize(device)

    for _ in range(warmup):
        fn()
    durations = []
    while len(durations) < repeats:
        sync()
        start = clock()
        fn()
        sync()
        stop = clock()
        durations.append(stop - start)
    ordered = sorted(durations)
    middle = len(ordered) // 2
    if len(ordered) % 2 == 1:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
'''),
    ],
    "roofline": [
        ("shared helper that returns both times; sizes multiplied through a tuple sum; the bound "
         "phrased as 'memory only if memory takes strictly longer'",
         '''def gemm_flops(m, n, k):
    """FLOPs of C = A @ B, A of shape (m, k), B of shape (k, n)."""
    multiplies = m * n * k
    adds = m * n * k
    return multiplies + adds


def gemm_bytes(m, n, k, dtype_bytes):
    """Bytes moved by C = A @ B when A and B are read once and C is written once."""
    elements = sum((m * k, k * n, m * n))
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
    return max(_times(flops, nbytes, peak_flops, bandwidth))


def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    """'compute' if the arithmetic takes at least as long as the memory traffic, else 'memory'."""
    compute_s, memory_s = _times(flops, nbytes, peak_flops, bandwidth)
    return "memory" if memory_s > compute_s else "compute"
'''),
    ],
    "transfer_vs_compute": [
        ("named inner functions, the on-device operand made with the same copying function, and "
         "the result dict filled in step by step",
         '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    def copy_to_device():
        return x.to(device, copy=True)

    resident = copy_to_device()          # made once, before any timing

    def compute_on_device():
        return op(resident)

    result = {}
    result["transfer_s"] = timer(copy_to_device, device=device)
    result["compute_s"] = timer(compute_on_device, device=device)
    if result["transfer_s"] > result["compute_s"]:
        result["bottleneck"] = "transfer"
    else:
        result["bottleneck"] = "compute"
    return result
'''),
    ],
}
