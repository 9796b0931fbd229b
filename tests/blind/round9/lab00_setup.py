"""Lab 00: answers written from the released notebook's text alone (blind corpus, round 9)."""

WRONG = {
    'time_it': [
        ('For an even number of repeats it returns the upper middle value instead of the mean of the two middle values that the text asks for.', '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
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
        ('It checks `repeats < 1` only after the warm-up calls, so `repeats=0` calls `fn` before the ValueError, which the text forbids ("before fn is called at all").', '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    if sync is None:
        sync = lambda: synchronize(device)
    for _ in range(warmup):
        fn()
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    durations = []
    for _ in range(repeats):
        sync()
        start = clock()
        fn()
        sync()
        durations.append(clock() - start)
    return statistics.median(durations)
'''),
        ('It reads time.perf_counter() directly instead of the `clock` argument, so a pretend device with its own clock is not honoured.', '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
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
        ('It does not sync before starting the clock (only after fn), so work still queued from the warm-up is charged to the first timed call; step 2 asks for sync() before start = clock().', '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
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
    ],
    'roofline': [
        ('roofline_bound uses a strict `>`, so an exact tie between arithmetic and memory time gives "memory" although the text says "compute" when the arithmetic time is at least the memory time.', '''def gemm_flops(m, n, k):
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
        ('add_flops counts an add as a multiply-add (2 FLOPs per element, like the GEMM count) instead of the N FLOPs the text gives for c = a + b.', '''def gemm_flops(m, n, k):
    return 2 * m * n * k


def gemm_bytes(m, n, k, dtype_bytes):
    return (m * k + k * n + m * n) * dtype_bytes


def add_flops(numel):
    return 2 * numel


def add_bytes(numel, dtype_bytes):
    return 3 * numel * dtype_bytes


def roofline_time(flops, nbytes, peak_flops, bandwidth):
    return max(flops / peak_flops, nbytes / bandwidth)


def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    return "compute" if flops / peak_flops >= nbytes / bandwidth else "memory"
'''),
    ],
    'transfer_vs_compute': [
        ('The transfer uses x.to(device) without copy=True, so on the CPU it returns x itself and measures no copy; the text asks for x.to(device, copy=True).', '''def transfer_vs_compute(x, op, device, timer=time_it):
    def transfer():
        return x.to(device)

    on_device = x.to(device, copy=True)

    def compute():
        return op(on_device)

    transfer_s = timer(transfer, device=device)
    compute_s = timer(compute, device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ('The timed compute function copies x to the device on every call, so compute_s includes a transfer; the text says the copy is made once, before timing.', '''def transfer_vs_compute(x, op, device, timer=time_it):
    def transfer():
        return x.to(device, copy=True)

    def compute():
        return op(x.to(device))

    transfer_s = timer(transfer, device=device)
    compute_s = timer(compute, device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ('The timer is called without device=device (it falls back to its default), breaking the "timer(fn, device=device)" the text prescribes, so nothing is synchronised on a GPU.', '''def transfer_vs_compute(x, op, device, timer=time_it):
    on_device = x.to(device, copy=True)
    transfer_s = timer(lambda: x.to(device, copy=True))
    compute_s = timer(lambda: op(on_device))
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ('The copy is made as float32 (to match the GPU-friendly dtype), so a float64 x does not keep its dtype as the text requires.', '''def transfer_vs_compute(x, op, device, timer=time_it):
    transfer = lambda: x.to(device, dtype=torch.float32, copy=True)
    on_device = x.to(device, dtype=torch.float32, copy=True)
    compute = lambda: op(on_device)
    transfer_s = timer(transfer, device=device)
    compute_s = timer(compute, device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
    ],
}

RIGHT = {
    'time_it': [
        ('Computes the median by hand from a sorted list (mean of the two middle values for an even count) and binds the default sync with functools.partial.', '''import functools


def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    if not repeats >= 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    wait = sync if sync is not None else functools.partial(synchronize, device)
    for _ in range(warmup):
        fn()
    durations = []
    while len(durations) < repeats:
        wait()
        start = clock()
        fn()
        wait()
        durations.append(clock() - start)
    ordered = sorted(durations)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
'''),
    ],
    'roofline': [
        ('Factors the byte counts differently and picks the bound by indexing a tuple with the comparison, the tie going to "compute".', '''def gemm_flops(m, n, k):
    return m * n * (k + k)


def gemm_bytes(m, n, k, dtype_bytes):
    return dtype_bytes * (k * (m + n) + m * n)


def add_flops(numel):
    return numel * 1


def add_bytes(numel, dtype_bytes):
    reads, writes = 2 * numel, numel
    return (reads + writes) * dtype_bytes


def roofline_time(flops, nbytes, peak_flops, bandwidth):
    compute_s, memory_s = flops / peak_flops, nbytes / bandwidth
    return compute_s if compute_s >= memory_s else memory_s


def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    compute_s, memory_s = flops / peak_flops, nbytes / bandwidth
    return ("memory", "compute")[compute_s >= memory_s]
'''),
    ],
    'transfer_vs_compute': [
        ('Uses named inner functions and builds the result dict step by step; the device copy for compute is made once with the same x.to(device, copy=True).', '''def transfer_vs_compute(x, op, device, timer=time_it):
    resident = x.to(device, copy=True)

    def copy_to_device():
        moved = x.to(device, copy=True)
        return moved

    def run_op():
        return op(resident)

    result = {}
    result["transfer_s"] = timer(copy_to_device, device=device)
    result["compute_s"] = timer(run_op, device=device)
    if result["transfer_s"] > result["compute_s"]:
        result["bottleneck"] = "transfer"
    else:
        result["bottleneck"] = "compute"
    return result
'''),
    ],
}
