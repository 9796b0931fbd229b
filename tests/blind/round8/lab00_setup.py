"""Lab 00: answers written from the released notebook's text alone (blind corpus, round 8)."""

WRONG = {
    'time_it': [
        ('No sync() before start = clock(): only the sync after fn() is kept, so work queued by the warm-up (and by anything before) is billed to the first timed call; breaks step 2 "sync(); start = clock(); ..." (hidden by the median unless repeats is small)', '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
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
        sync()          # wait for the device before reading the clock
        stop = clock()
        durations.append(stop - start)
    return statistics.median(durations)
'''),
        ('Refuses only repeats == 0 (`if not repeats`): a negative repeats runs the warm-up calls of fn first and then fails inside statistics.median; breaks "Raise ValueError when repeats < 1, before fn is called at all"', '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if not repeats:
        raise ValueError("need at least one timed repeat")
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
    return statistics.median(durations)
'''),
        ('Median taken as sorted(durations)[len // 2], the upper middle value: for an even number of repeats it is not the mean of the two middle values the text asks for', '''def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
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
    ],
    'roofline': [
        ('roofline_bound uses a strict > : when the arithmetic time equals the memory time (exactly at the ridge point) it answers "memory"; breaks ""compute" when the arithmetic time is at least the memory time"', '''def gemm_flops(m, n, k):
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
    compute_s, memory_s = flops / peak_flops, nbytes / bandwidth
    return "compute" if compute_s > memory_s else "memory"
'''),
        ('roofline_bound treats times that are math.isclose as a tie ("floats are never exactly equal"), so an arithmetic time a hair below the memory time is called "compute"; breaks ""compute" when the arithmetic time is at least the memory time, else "memory""', '''import math


def gemm_flops(m, n, k):
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
    compute_s, memory_s = flops / peak_flops, nbytes / bandwidth
    # floats are never exactly equal: treat a near-tie as a tie, and a tie is "compute"
    if compute_s > memory_s or math.isclose(compute_s, memory_s, rel_tol=1e-6):
        return "compute"
    return "memory"
'''),
    ],
    'transfer_vs_compute': [
        ('The on-device operand is made with x.to(device) without copy=True: on the CPU (or when x is already on device) it is x itself, not a copy, so an in-place op mutates the caller’s tensor; breaks "applies op to a copy of x that is already on device"', '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    def transfer():
        return x.to(device, copy=True)

    x_dev = x.to(device)           # once, before timing

    def compute():
        return op(x_dev)

    transfer_s = timer(transfer, device=device)
    compute_s = timer(compute, device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ('Ties go to "transfer" (>=): equal times must give "compute" since the text says "transfer" only if transfer_s > compute_s', '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    def transfer():
        return x.to(device, copy=True)

    x_dev = x.to(device, copy=True)

    def compute():
        return op(x_dev)

    transfer_s = timer(transfer, device=device)
    compute_s = timer(compute, device=device)
    bottleneck = "compute" if compute_s > transfer_s else "transfer"
    return {"transfer_s": transfer_s, "compute_s": compute_s, "bottleneck": bottleneck}
'''),
        ('The timed transfer is x.clone().to(device) ("clone to be sure it is a copy"): on a GPU it times an extra host-side copy before the real one, and it is not the x.to(device, copy=True) the text asks for', '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    def transfer():
        return x.clone().to(device)    # clone first so it is always a copy

    x_dev = x.to(device, copy=True)

    def compute():
        return op(x_dev)

    transfer_s = timer(transfer, device=device)
    compute_s = timer(compute, device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
        ('Bottleneck "transfer" only when transfer_s exceeds compute_s by more than 5 % (borrowing the notebook\'s tie idea): close times give "compute" even when transfer_s > compute_s; breaks ""transfer" if transfer_s > compute_s"', '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    def transfer():
        return x.to(device, copy=True)

    x_dev = x.to(device, copy=True)

    def compute():
        return op(x_dev)

    transfer_s = timer(transfer, device=device)
    compute_s = timer(compute, device=device)
    # timings are noisy: call it a transfer bottleneck only when it is clearly slower
    bottleneck = "transfer" if transfer_s > 1.05 * compute_s else "compute"
    return {"transfer_s": transfer_s, "compute_s": compute_s, "bottleneck": bottleneck}
'''),
        ('The device copy for compute is made lazily inside the timed function on its first call (cached afterwards): it relies on the timer\'s warm-up, so with warmup=0 (or any timer that times the first call) compute_s includes a copy; breaks "make it once, before timing"', '''def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    def transfer():
        return x.to(device, copy=True)

    cache = {}

    def compute():
        if "x" not in cache:      # made once, on the first (warm-up) call
            cache["x"] = x.to(device, copy=True)
        return op(cache["x"])

    transfer_s = timer(transfer, device=device)
    compute_s = timer(compute, device=device)
    return {"transfer_s": transfer_s, "compute_s": compute_s,
            "bottleneck": "transfer" if transfer_s > compute_s else "compute"}
'''),
    ],
}

RIGHT = {
    'time_it': [
        ('Median computed by hand from the sorted readings ((s[(n-1)//2] + s[n//2]) / 2) and the default sync built with functools.partial, instead of statistics.median and a closure', '''import functools


def time_it(fn, warmup=3, repeats=10, device=None, sync=None, clock=time.perf_counter):
    """Median seconds of one call of `fn()`, after `warmup` untimed calls."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    sync = functools.partial(synchronize, device) if sync is None else sync

    def one_reading():
        sync()
        start = clock()
        fn()
        sync()
        return clock() - start

    for _ in range(warmup):
        fn()
    readings = sorted(one_reading() for _ in range(repeats))
    n = len(readings)
    return (readings[(n - 1) // 2] + readings[n // 2]) / 2
'''),
    ],
    'roofline': [
        ('Each function written through two helpers (arithmetic time, memory time); roofline_bound asks roofline_time which term set the bound, so ties go to "compute" by construction', '''def gemm_flops(m, n, k):
    """FLOPs of C = A @ B, A of shape (m, k), B of shape (k, n)."""
    multiplications = m * n * k
    additions = m * n * k
    return multiplications + additions


def gemm_bytes(m, n, k, dtype_bytes):
    """Bytes moved by C = A @ B when A and B are read once and C is written once."""
    elements = sum((m * k, k * n, m * n))     # A read, B read, C written
    return elements * dtype_bytes


def add_flops(numel):
    """FLOPs of c = a + b with `numel` elements."""
    return 1 * numel


def add_bytes(numel, dtype_bytes):
    """Bytes moved by c = a + b: two arrays read, one written."""
    return (2 + 1) * numel * dtype_bytes


def _arithmetic_s(flops, peak_flops):
    return flops / peak_flops


def _memory_s(nbytes, bandwidth):
    return nbytes / bandwidth


def roofline_time(flops, nbytes, peak_flops, bandwidth):
    """Lower bound on the time in seconds: the slower of arithmetic and memory traffic."""
    return max(_arithmetic_s(flops, peak_flops), _memory_s(nbytes, bandwidth))


def roofline_bound(flops, nbytes, peak_flops, bandwidth):
    """'compute' if the arithmetic takes at least as long as the memory traffic, else 'memory'."""
    t = roofline_time(flops, nbytes, peak_flops, bandwidth)
    return "compute" if t == _arithmetic_s(flops, peak_flops) else "memory"
'''),
    ],
    'transfer_vs_compute': [
        ('Timed functions built with functools.partial (the bound x.to returns the copy), the device copy made under torch.no_grad(), and the verdict picked with max over a dict', '''import functools


def transfer_vs_compute(x, op, device, timer=time_it):
    """Time copying `x` to `device` and computing `op` there; say which takes longer."""
    copy_to_device = functools.partial(x.to, device, copy=True)
    with torch.no_grad():
        resident = x.to(device, copy=True)          # made once, before any timing
    run_op = functools.partial(op, resident)
    times = {"transfer": timer(copy_to_device, device=device),
             "compute": timer(run_op, device=device)}
    bottleneck = "transfer" if times["transfer"] > times["compute"] else "compute"
    return {"transfer_s": times["transfer"], "compute_s": times["compute"], "bottleneck": bottleneck}
'''),
    ],
}


# Wrong answers the checks still miss (strict expected failures in tests/blind/test_blind.py).
_PROMISE = (
    'a promise of the text that no case tests yet: found by blind round 8 (2026-11-28), to '
    'be caught with a case, a mutant and a property row'
)
_METHOD = (
    'how, not what: the same results on every input the checks give here; the text asks for '
    'a way of doing it that no case observes yet (blind round 8)'
)
_DEVICE = (
    'differs only on a GPU or with another number of devices, which the checks here do not '
    'have (blind round 8)'
)
SURVIVORS = {
    ('transfer_vs_compute', 2): _METHOD,
}
