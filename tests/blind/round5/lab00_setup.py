"""Lab 00: answers written from the released notebook's text alone (blind corpus, round 5)."""

WRONG = {
    "time_it": [
        ("ignores the `clock` parameter and reads time.perf_counter directly: a pretend device's own clock is never consulted",
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
        ("median taken as sorted(durations)[len // 2]: for an even number of repeats it returns the upper middle value, not the mean of the two middle ones",
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
        ("always runs at least one warm-up call (range(max(warmup, 1))): with warmup=0 fn is called repeats + 1 times",
         '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    if sync is None:
        sync = lambda: synchronize(device)
    # a cold first call would spoil the first reading: always warm up at least once
    for _ in range(max(warmup, 1)):
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
        ("roofline_bound uses a strict >: when arithmetic time equals memory time it answers 'memory' instead of 'compute'",
         '''def gemm_flops(m, n, k):
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
    return "compute" if flops / peak_flops > nbytes / bandwidth else "memory"
'''),
        ("gemm_flops counts k - 1 additions per output (2mnk - mn), the 'exact' count, not the 2·m·n·k the text defines",
         '''def gemm_flops(m, n, k):
    # k multiplications and k - 1 additions for each of the m * n outputs
    return m * n * (2 * k - 1)


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
'''),
        ("roofline_time adds the arithmetic time and the memory time instead of taking the larger of the two",
         '''def gemm_flops(m, n, k):
    return 2 * m * n * k


def gemm_bytes(m, n, k, dtype_bytes):
    return (m * k + k * n + m * n) * dtype_bytes


def add_flops(numel):
    return numel


def add_bytes(numel, dtype_bytes):
    return 3 * numel * dtype_bytes


def roofline_time(flops, nbytes, peak_flops, bandwidth):
    compute_s = flops / peak_flops
    memory_s = nbytes / bandwidth
    return compute_s + memory_s  # both resources have to be spent


def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    return "compute" if flops / peak_flops >= nbytes / bandwidth else "memory"
'''),
    ],
    "transfer_vs_compute": [
        ("calls the timer without device=device (timer(fn) only): the device is never handed to the timer, so a GPU is never synchronised",
         '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    def transfer():
        return x.to(device, copy=True)

    on_device = x.to(device, copy=True)

    def compute():
        return op(on_device)

    transfer_s = timer(transfer)
    compute_s = timer(compute)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ("copies with x.to(device) without copy=True: on the CPU this returns x itself, so nothing is copied and the 'copy' is the caller's tensor",
         '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    on_device = x.to(device)
    transfer_s = timer(lambda: x.to(device), device=device)
    compute_s = timer(lambda: op(on_device), device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ("bottleneck uses >=: when the two times are equal it says 'transfer' where the text says 'compute'",
         '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    on_device = x.to(device, copy=True)
    transfer_s = timer(lambda: x.to(device, copy=True), device=device)
    compute_s = timer(lambda: op(on_device), device=device)
    bottleneck = "transfer" if transfer_s >= compute_s else "compute"
    return {"transfer_s": transfer_s, "compute_s": compute_s, "bottleneck": bottleneck}
'''),
        ("the compute function copies x to the device inside the timed call (op(x.to(device, copy=True))) instead of using a copy made once before timing",
         '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    def transfer():
        return x.to(device, copy=True)

    def compute():
        return op(x.to(device, copy=True))

    transfer_s = timer(transfer, device=device)
    compute_s = timer(compute, device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
    ],
}

RIGHT = {
    "time_it": [
        ("median computed by hand from the sorted durations (mean of the two middle values for an even count); sync defaulted through a nested def",
         '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
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
    ordered = sorted(durations)
    mid = len(ordered) // 2
    if len(ordered) % 2 == 1:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2
'''),
    ],
    "roofline": [
        ("roofline_bound derived from roofline_time (compute-bound when the arithmetic term is the max), helper for the per-resource times",
         '''def gemm_flops(m, n, k):
    """FLOPs of C = A @ B."""
    return 2 * m * n * k


def gemm_bytes(m, n, k, dtype_bytes):
    """A and B read once, C written once."""
    elements = m * k + k * n + m * n
    return elements * dtype_bytes


def add_flops(numel):
    return 1 * numel


def add_bytes(numel, dtype_bytes):
    reads, writes = 2 * numel, numel
    return (reads + writes) * dtype_bytes


def _times(flops, nbytes, peak_flops, bandwidth):
    return flops / peak_flops, nbytes / bandwidth


def roofline_time(flops, nbytes, peak_flops, bandwidth):
    return max(_times(flops, nbytes, peak_flops, bandwidth))


def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    compute_s, memory_s = _times(flops, nbytes, peak_flops, bandwidth)
    if compute_s >= memory_s:
        return "compute"
    return "memory"
'''),
    ],
    "transfer_vs_compute": [
        ("named inner functions, the op run under torch.no_grad(), the result dict built at the end",
         '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    def copy_to_device():
        return x.to(device, copy=True)

    resident = copy_to_device()  # made once, before timing

    def run_op():
        with torch.no_grad():
            return op(resident)

    result = {"transfer_s": timer(copy_to_device, device=device),
              "compute_s": timer(run_op, device=device)}
    result["bottleneck"] = "transfer" if result["transfer_s"] > result["compute_s"] else "compute"
    return result
'''),
    ],
}
