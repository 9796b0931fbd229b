"""Realistic wrong answers for lab00_setup: each must lose points in its checks cell."""

_TIME_IT_HEAD = '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
'''

_ROOFLINE = {
    "gemm_flops": '''def gemm_flops(m, n, k):
    """FLOPs of C = A @ B, A of shape (m, k), B of shape (k, n)."""
    return 2 * m * n * k
''',
    "gemm_bytes": '''def gemm_bytes(m, n, k, dtype_bytes):
    """Bytes moved by C = A @ B when A and B are read once and C is written once."""
    return (m * k + k * n + m * n) * dtype_bytes
''',
    "add_flops": '''def add_flops(numel):
    """FLOPs of c = a + b with `numel` elements."""
    return numel
''',
    "add_bytes": '''def add_bytes(numel, dtype_bytes):
    """Bytes moved by c = a + b: two arrays read, one written."""
    return 3 * numel * dtype_bytes
''',
    "roofline_time": '''def roofline_time(flops, nbytes, peak_flops, bandwidth):
    """Lower bound on the time in seconds: the slower of arithmetic and memory traffic."""
    return max(flops / peak_flops, nbytes / bandwidth)
''',
    "roofline_bound": '''def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    """'compute' if the arithmetic takes at least as long as the memory traffic, else 'memory'."""
    return "compute" if flops / peak_flops >= nbytes / bandwidth else "memory"
''',
}


def _roofline_with(**replaced):
    """The roofline answer cell with some functions replaced by wrong ones."""
    return "\n\n".join(replaced.get(name, source) for name, source in _ROOFLINE.items())


_TRANSFER_HEAD = '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
'''

MUTANTS = {
    "time_it": [
        ("skips the warm-up: the slow first call is timed", _TIME_IT_HEAD + '''    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    if sync is None:
        sync = lambda: synchronize(device)
    durations = []
    for _ in range(repeats):
        sync()
        start = clock()
        fn()
        sync()
        durations.append(clock() - start)
    return statistics.median(durations)
'''),
        ("returns the mean, which one slow call drags up", _TIME_IT_HEAD + '''    if repeats < 1:
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
        durations.append(clock() - start)
    return sum(durations) / len(durations)
'''),
        ("never synchronises: times the launch, not the work", _TIME_IT_HEAD + '''    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    for _ in range(warmup):
        fn()
    durations = []
    for _ in range(repeats):
        start = clock()
        fn()
        durations.append(clock() - start)
    return statistics.median(durations)
'''),
        ("median as the middle element of the sorted list (wrong for an even count)",
         _TIME_IT_HEAD + '''    if repeats < 1:
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
        durations.append(clock() - start)
    return sorted(durations)[len(durations) // 2]
'''),
        ("times all repeats at once and divides (an average, not a median)", _TIME_IT_HEAD + '''    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    if sync is None:
        sync = lambda: synchronize(device)
    for _ in range(warmup):
        fn()
    sync()
    start = clock()
    for _ in range(repeats):
        fn()
    sync()
    return (clock() - start) / repeats
'''),
        ("returns milliseconds", _TIME_IT_HEAD + '''    if repeats < 1:
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
        durations.append((clock() - start) * 1000)
    return statistics.median(durations)
'''),
        ("always calls synchronize(device) and ignores the sync and clock it is given",
         _TIME_IT_HEAD + '''    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    for _ in range(warmup):
        fn()
    durations = []
    for _ in range(repeats):
        synchronize(device)
        start = time.perf_counter()
        fn()
        synchronize(device)
        durations.append(time.perf_counter() - start)
    return statistics.median(durations)
'''),
        ("np.median of nothing instead of a ValueError, and a sync only after the call",
         _TIME_IT_HEAD + '''    if sync is None:
        sync = lambda: synchronize(device)
    for _ in range(warmup):
        fn()
    durations = []
    for _ in range(repeats):
        start = clock()
        fn()
        sync()
        durations.append(clock() - start)
    return float(np.median(durations)) if durations else float("nan")
'''),
        ("refuses only repeats == 0 (if not repeats): a negative count runs the warm-up first",
         _TIME_IT_HEAD + '''    if not repeats:
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
        durations.append(clock() - start)
    return statistics.median(durations)
'''),
        ("checks repeats only after the warm-up: fn runs before the ValueError",
         _TIME_IT_HEAD + '''    if sync is None:
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
    ],
    "roofline": [
        ("times within math.isclose count as a tie ('compute')", _roofline_with(roofline_bound='''def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    compute, memory = flops / peak_flops, nbytes / bandwidth
    close = abs(compute - memory) <= 1e-9 * max(compute, memory)   # math.isclose's rule
    return "compute" if compute >= memory or close else "memory"
''')),
        ("counts one FLOP per multiply-add: forgets the factor 2", _roofline_with(gemm_flops='''def gemm_flops(m, n, k):
    """FLOPs of C = A @ B, A of shape (m, k), B of shape (k, n)."""
    return m * n * k
''')),
        ("GEMM bytes without writing C", _roofline_with(gemm_bytes='''def gemm_bytes(m, n, k, dtype_bytes):
    """Bytes moved by C = A @ B when A and B are read once and C is written once."""
    return (m * k + k * n) * dtype_bytes
''')),
        ("counts elements instead of bytes", _roofline_with(gemm_bytes='''def gemm_bytes(m, n, k, dtype_bytes):
    """Bytes moved by C = A @ B when A and B are read once and C is written once."""
    return m * k + k * n + m * n
''', add_bytes='''def add_bytes(numel, dtype_bytes):
    """Bytes moved by c = a + b: two arrays read, one written."""
    return 3 * numel
''')),
        ("add reads two arrays but forgets the write", _roofline_with(add_bytes='''def add_bytes(numel, dtype_bytes):
    """Bytes moved by c = a + b: two arrays read, one written."""
    return 2 * numel * dtype_bytes
''')),
        ("adds the two times instead of taking the larger", _roofline_with(roofline_time='''def roofline_time(flops, nbytes, peak_flops, bandwidth):
    """Lower bound on the time in seconds: the slower of arithmetic and memory traffic."""
    return flops / peak_flops + nbytes / bandwidth
''')),
        ("takes the smaller time: the faster resource, not the limit", _roofline_with(roofline_time='''def roofline_time(flops, nbytes, peak_flops, bandwidth):
    """Lower bound on the time in seconds: the slower of arithmetic and memory traffic."""
    return min(flops / peak_flops, nbytes / bandwidth)
''')),
        ("bound decided by intensity > 1 instead of the ridge point", _roofline_with(roofline_bound='''def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    """'compute' if the arithmetic takes at least as long as the memory traffic, else 'memory'."""
    return "compute" if flops / nbytes > 1 else "memory"
''')),
    ],
    "transfer_vs_compute": [
        ("'transfer' only when the copy is over 5% slower", _TRANSFER_HEAD + '''    x_on_device = x.to(device, copy=True)
    transfer_s = timer(lambda: x.to(device, copy=True), device=device)
    compute_s = timer(lambda: op(x_on_device), device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > 1.05 * compute_s else "compute"}
'''),
        ("the operand on the device made without copy=True: op gets x itself on the CPU",
         _TRANSFER_HEAD + '''    x_on_device = x.to(device)
    transfer_s = timer(lambda: x.to(device, copy=True), device=device)
    compute_s = timer(lambda: op(x_on_device), device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ("the copy cast to float32 on the way: a float64 x comes back float32",
         _TRANSFER_HEAD + '''    x_on_device = x.to(device, copy=True)
    transfer_s = timer(lambda: x.to(device, torch.float32, copy=True), device=device)
    compute_s = timer(lambda: op(x_on_device), device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ("hard-wires the CPU", _TRANSFER_HEAD + '''    x_on_device = x.to("cpu", copy=True)
    transfer_s = timer(lambda: x.to("cpu", copy=True), device=device)
    compute_s = timer(lambda: op(x_on_device), device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ("the device copy for compute made lazily inside the timed function, on its first call",
         _TRANSFER_HEAD + '''    cache = {}

    def compute():
        if "x" not in cache:
            cache["x"] = x.to(device, copy=True)
        return op(cache["x"])

    transfer_s = timer(lambda: x.to(device, copy=True), device=device)
    compute_s = timer(compute, device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ("computes on the host tensor", _TRANSFER_HEAD + '''    transfer_s = timer(lambda: x.to(device, copy=True), device=device)
    compute_s = timer(lambda: op(x), device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ("copies inside the timed compute, so compute_s includes a transfer", _TRANSFER_HEAD + '''    transfer_s = timer(lambda: x.to(device, copy=True), device=device)
    compute_s = timer(lambda: op(x.to(device, copy=True)), device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ("x.to(device) without copy=True: nothing is copied on the CPU", _TRANSFER_HEAD + '''    x_on_device = x.to(device)
    transfer_s = timer(lambda: x.to(device), device=device)
    compute_s = timer(lambda: op(x_on_device), device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ("conclusion the wrong way round", _TRANSFER_HEAD + '''    x_on_device = x.to(device, copy=True)
    transfer_s = timer(lambda: x.to(device, copy=True), device=device)
    compute_s = timer(lambda: op(x_on_device), device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "compute" if transfer_s > compute_s else "transfer"}
'''),
        ("does not tell the timer the device (no synchronisation on a GPU)", _TRANSFER_HEAD + '''    x_on_device = x.to(device, copy=True)
    transfer_s = timer(lambda: x.to(device, copy=True))
    compute_s = timer(lambda: op(x_on_device))
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ("a fixed conclusion: 'transfer' is always the bottleneck", _TRANSFER_HEAD + '''    x_on_device = x.to(device, copy=True)
    transfer_s = timer(lambda: x.to(device, copy=True), device=device)
    compute_s = timer(lambda: op(x_on_device), device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s, "bottleneck": "transfer"}
'''),
    ],
}

# Right answers written differently: each must keep full marks (the checks are not over-fitted).
ALTERNATIVES = {
    "time_it": [
        ("np.median, one sync after the warm-up and one after each call", '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    wait = sync if sync is not None else (lambda: synchronize(device))
    for _ in range(warmup):
        fn()
    wait()
    durations = np.empty(repeats)
    for r in range(repeats):
        start = clock()
        fn()
        wait()
        durations[r] = clock() - start
    return float(np.median(durations))
'''),
    ],
    "roofline": [
        ("bound from the intensity and the ridge point; explicit if/else", _roofline_with(
            roofline_time='''def roofline_time(flops, nbytes, peak_flops, bandwidth):
    """Lower bound on the time in seconds: the slower of arithmetic and memory traffic."""
    compute, memory = flops / peak_flops, nbytes / bandwidth
    if compute > memory:
        return compute
    return memory
''', roofline_bound='''def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    """'compute' if the arithmetic takes at least as long as the memory traffic, else 'memory'."""
    intensity, ridge = flops / nbytes, peak_flops / bandwidth
    return "compute" if intensity >= ridge else "memory"
''', gemm_bytes='''def gemm_bytes(m, n, k, dtype_bytes):
    """Bytes moved by C = A @ B when A and B are read once and C is written once."""
    a, b, c = m * k, k * n, m * n
    return dtype_bytes * a + dtype_bytes * b + dtype_bytes * c
''')),
    ],
    "transfer_vs_compute": [
        ("named functions, compute timed first, explicit timer arguments", '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    resident = x.to(device=device, copy=True)

    def compute():
        return op(resident)

    def transfer():
        return x.to(device=device, copy=True)

    compute_s = timer(compute, warmup=2, repeats=5, device=device)
    transfer_s = timer(transfer, warmup=2, repeats=5, device=device)
    bottleneck = "compute"
    if transfer_s > compute_s:
        bottleneck = "transfer"
    return dict(transfer_s=transfer_s, compute_s=compute_s, bottleneck=bottleneck)
'''),
    ],
}
