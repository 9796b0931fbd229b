"""Measuring what this machine can do: matmul throughput, memory bandwidth, host↔device copies.

Every figure is reported next to the device's known peak (``peaks.py``) as a fraction of it:

* **matmul**: ``C = A @ B`` with square ``n × n`` inputs, ``2 n³`` FLOPs per call, in fp32,
  tf32 (fp32 inputs on TF32 tensor cores), bf16 and fp16 where the device supports them.
* **copy**: ``dst.copy_(src)`` of a large buffer on the device, counting the bytes read
  *plus* the bytes written (2 × size), as memory bandwidth is quoted. On the CPU this is a
  large array copy in RAM.
* **h2d / d2h**: host→device and device→host copies, from ordinary (pageable) host memory
  and from pinned (page-locked) memory. Pageable copies go through a staging buffer the
  driver copies into first; pinned memory lets the GPU's DMA engine read it directly, which
  is why ``DataLoader(pin_memory=True)`` matters.

NOTE [honest measurements]
    * Inputs are random normal numbers, never zeros: GPUs draw less power on zeros (and clock
      higher), and a sparse-aware kernel could skip them.
    * Each call uses the next of several input buffers, enough that together they are
      larger than the last-level cache, so a repeated call cannot be served from cache.
    * ``Timer`` (``timing.py``) warms up, synchronises (CUDA events on GPUs), repeats and
      takes the median.
    * On the CPU the thread count is set explicitly (physical cores we may use) and recorded;
      the CPU peak estimate uses the same number of cores.
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable, Iterator

from . import host, nvidia
from .devices import DeviceLike, is_usable, pick_device
from .peaks import DTYPES, Peak, cpu_flops_per_cycle, cpu_peak, lookup_gpu
from .timing import Measurement, Timer

MiB = 1024**2
KINDS = ("matmul", "copy", "transfer")


@dataclass(frozen=True)
class BenchConfig:
    """Sizes and repeat counts. ``QUICK`` answers in seconds, ``FULL`` gets closer to the peak.

    ``matmul_sizes`` and ``copy_bytes`` are per device type (``cpu``, ``cuda``, ``mps``).
    Bigger matmul sizes are skipped when the previous size predicts more than
    ``max_call_seconds`` per call (the time grows as n³).
    """

    matmul_sizes: dict[str, tuple[int, ...]]
    copy_bytes: dict[str, int]
    transfer_bytes: int
    warmup: int
    repeats: int
    min_repeat_time: float
    max_call_seconds: float = 1.0


QUICK = BenchConfig(
    matmul_sizes={"cpu": (1024,), "cuda": (4096,), "mps": (2048,)},
    copy_bytes={"cpu": 64 * MiB, "cuda": 256 * MiB, "mps": 128 * MiB},
    transfer_bytes=64 * MiB,
    warmup=2, repeats=5, min_repeat_time=0.01,
)
FULL = BenchConfig(
    matmul_sizes={"cpu": (1024, 2048), "cuda": (4096, 8192, 16384), "mps": (2048, 4096)},
    copy_bytes={"cpu": 256 * MiB, "cuda": 1024 * MiB, "mps": 512 * MiB},
    transfer_bytes=256 * MiB,
    warmup=5, repeats=10, min_repeat_time=0.05,
)


@dataclass(frozen=True)
class BenchResult:
    """One measurement, or one that was skipped (``value is None``, ``skipped`` says why).

    Attributes:
        kind: ``"matmul"``, ``"copy"``, ``"h2d"`` or ``"d2h"``.
        device: e.g. ``"cpu"``, ``"cuda:0"``.
        dtype: ``"fp32"``, ``"tf32"``, ``"bf16"``, ``"fp16"`` for matmul, else ``None``.
        variant: ``"pageable"`` or ``"pinned"`` for transfers, else ``None``.
        size: ``n`` of the ``n × n`` matmul, or the buffer size in bytes.
        work_per_call: FLOPs (matmul) or bytes moved (copy: read + written) per call.
        value: TFLOP/s (matmul) or GB/s (everything else), at the median time.
        unit: ``"TFLOP/s"`` or ``"GB/s"``.
        peak: the device's peak in the same unit, ``None`` if unknown.
        peak_name: which part the peak belongs to, e.g. ``"H100 SXM"`` or ``"PCIe 5.0 x16"``.
        peak_is_estimate: the peak is an estimate (the CPU), not a vendor figure.
        fraction_of_peak: ``value / peak``.
        timing: the median, spread, repeats and method of the measurement.
        threads: CPU threads used (CPU only).
        skipped: why there is no value.
    """

    kind: str
    device: str
    dtype: str | None = None
    variant: str | None = None
    size: int = 0
    work_per_call: float = 0.0
    value: float | None = None
    unit: str = "GB/s"
    peak: float | None = None
    peak_name: str | None = None
    peak_is_estimate: bool = False
    fraction_of_peak: float | None = None
    timing: dict[str, Any] | None = None
    threads: int | None = None
    skipped: str | None = None

    @property
    def label(self) -> str:
        """Short name for tables and plots, e.g. ``"cuda:0 matmul bf16"``."""
        what = self.kind + (f" {self.dtype}" if self.dtype else "") + (f" {self.variant}" if self.variant else "")
        return f"{self.device} {what}"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------------------------------------
# Devices: peaks, caches, memory budgets
# ---------------------------------------------------------------------------------------------

def cpu_threads() -> int:
    """Threads the CPU benchmarks use: the physical cores this process may run on."""
    return host.cpu_info().compute_cores


@contextlib.contextmanager
def _torch_threads(n: int) -> Iterator[None]:
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def device_peak(device: DeviceLike) -> Peak | None:
    """The known (or, for the CPU, estimated) peak of ``device``; ``None`` if unknown."""
    import torch

    dev = torch.device(device)
    if dev.type == "cpu":
        return cpu_peak(cores=cpu_threads())
    if dev.type == "cuda" and is_usable(dev):
        props = torch.cuda.get_device_properties(dev)
        return lookup_gpu(props.name, int(props.total_memory))
    return None


def _cache_bytes(dev: Any) -> int:
    """Size of the cache the inputs must overflow (CPU last level, GPU L2)."""
    import torch

    if dev.type == "cuda":
        size = getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 0)
        return int(size) or 64 * MiB
    return host.cpu_info().last_level_cache_bytes or 64 * MiB


def _memory_budget(dev: Any) -> int:
    """Bytes a benchmark may allocate on ``dev`` (a share of what is free)."""
    import torch

    if dev.type == "cuda":
        free, _ = torch.cuda.mem_get_info(dev)
        return int(free * 0.6)
    available = host.memory_info().get("available_bytes") or 4 * 1024**3
    return int(available * 0.25)


def _buffer_count(set_bytes: int, cache_bytes: int, budget: int, fixed: int = 0,
                  minimum: int = 2, maximum: int = 64) -> int:
    """How many input sets to rotate through: together at least twice the cache, within budget.

    Returns 0 when not even ``minimum`` sets fit in ``budget``.
    """
    wanted = max(minimum, min(maximum, math.ceil(2 * cache_bytes / max(1, set_bytes))))
    affordable = (budget - fixed) // max(1, set_bytes)
    if affordable < minimum:
        return 0
    return int(min(wanted, affordable))


def _cycle(items: list[Any]) -> Callable[[], Any]:
    """A function returning the items in turn, forever (cheap: no itertools object per call)."""
    state = {"i": -1}

    def next_item() -> Any:
        state["i"] = (state["i"] + 1) % len(items)
        return items[state["i"]]

    return next_item


def _result(kind: str, device: str, measurement: Measurement, work: float, scale: float, unit: str,
            peak: float | None, peak_name: str | None, estimate: bool, **extra: Any) -> BenchResult:
    value = measurement.rate(work) / scale
    return BenchResult(kind=kind, device=device, work_per_call=work, value=value, unit=unit, peak=peak,
                       peak_name=peak_name if peak else None, peak_is_estimate=estimate and peak is not None,
                       fraction_of_peak=(value / peak) if peak else None, timing=measurement.as_dict(), **extra)


# ---------------------------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------------------------

_TORCH_DTYPE = {"fp32": "float32", "tf32": "float32", "bf16": "bfloat16", "fp16": "float16"}


def matmul_support(device: DeviceLike, dtype: str) -> str | None:
    """``None`` if ``dtype`` matmul can be measured meaningfully on ``device``, else why not."""
    import torch

    if dtype not in DTYPES:
        return f"unknown dtype {dtype!r}: expected one of {', '.join(DTYPES)}"
    dev = torch.device(device)
    if dev.type == "cpu":
        if dtype == "tf32":
            return "TF32 is a tensor-core format of NVIDIA GPUs (Ampere and later); CPUs have no TF32 matmul"
        if dtype in ("bf16", "fp16"):
            per_cycle, _ = cpu_flops_per_cycle(host.cpu_info())
            if dtype not in per_cycle:
                needs = "AVX512-BF16 or AMX-BF16" if dtype == "bf16" else "AVX512-FP16 or AMX-FP16"
                return (f"this CPU has no {dtype} matrix instructions ({needs}); torch would emulate "
                        f"{dtype}, and the figure would measure the emulation")
        return None
    if dev.type == "cuda":
        major, minor = torch.cuda.get_device_capability(dev)
        if dtype in ("tf32", "bf16") and major < 8:
            return (f"{dtype} tensor cores need compute capability 8.0 (Ampere) or newer; this GPU is "
                    f"{major}.{minor}")
        return None
    if dtype == "tf32":
        return f"TF32 is an NVIDIA tensor-core format; {dev.type} has none"
    return None


@contextlib.contextmanager
def _fp32_matmul_precision(mode: str) -> Iterator[None]:
    """Force CUDA fp32 matmul to IEEE fp32 (``"ieee"``) or to TF32 (``"tf32"``) for a while."""
    import torch

    matmul = torch.backends.cuda.matmul
    if hasattr(matmul, "fp32_precision"):  # PyTorch >= 2.9
        old = matmul.fp32_precision
        matmul.fp32_precision = mode
        try:
            yield
        finally:
            matmul.fp32_precision = old
    else:
        old_flag = matmul.allow_tf32
        matmul.allow_tf32 = mode == "tf32"
        try:
            yield
        finally:
            matmul.allow_tf32 = old_flag


def bench_matmul(device: DeviceLike, dtype: str = "fp32", n: int = 1024, *, config: BenchConfig = QUICK,
                 peak: Peak | None = None) -> BenchResult:
    """Throughput of ``n × n`` matmul on ``device`` in ``dtype``, as a ``BenchResult``."""
    import torch

    dev = torch.device(device)
    name = str(device)
    reason = matmul_support(dev, dtype)
    if reason:
        return BenchResult("matmul", name, dtype, size=n, unit="TFLOP/s", skipped=reason)
    torch_dtype = getattr(torch, _TORCH_DTYPE[dtype])
    try:  # does the device do this dtype at all (e.g. bf16 on an old macOS)?
        probe = torch.randn(16, 16, device=dev).to(torch_dtype)
        torch.matmul(probe, probe)
    except Exception as exc:  # noqa: BLE001
        return BenchResult("matmul", name, dtype, size=n, unit="TFLOP/s",
                           skipped=f"not supported here: {type(exc).__name__}: {exc}"[:300])
    element = torch.tensor([], dtype=torch_dtype).element_size()
    set_bytes = 2 * n * n * element
    sets = _buffer_count(set_bytes, _cache_bytes(dev), _memory_budget(dev), fixed=n * n * element)
    if sets == 0:
        return BenchResult("matmul", name, dtype, size=n, unit="TFLOP/s",
                           skipped=f"not enough free memory for {n}×{n} {dtype} inputs")
    threads = cpu_threads() if dev.type == "cpu" else None
    peak = peak if peak is not None else device_peak(dev)
    pairs = [(torch.randn(n, n, device=dev).to(torch_dtype), torch.randn(n, n, device=dev).to(torch_dtype))
             for _ in range(sets)]
    out = torch.empty(n, n, device=dev, dtype=torch_dtype)
    next_pair = _cycle(pairs)

    def call() -> None:
        a, b = next_pair()
        torch.matmul(a, b, out=out)

    precision = _fp32_matmul_precision("tf32" if dtype == "tf32" else "ieee") if dev.type == "cuda" \
        else contextlib.nullcontext()
    threading = _torch_threads(threads) if threads else contextlib.nullcontext()
    with precision, threading, torch.no_grad():
        measurement = Timer(call, device=dev, warmup=config.warmup, repeats=config.repeats,
                            min_repeat_time=config.min_repeat_time).measure()
    del pairs
    peak_value = peak.matmul_tflops(dtype) if peak else None
    return _result("matmul", name, measurement, 2.0 * n**3, 1e12, "TFLOP/s", peak_value,
                   peak.name if peak else None, bool(peak and peak.estimate), dtype=dtype, size=n,
                   threads=threads)


# ---------------------------------------------------------------------------------------------
# memory bandwidth: a copy on the device
# ---------------------------------------------------------------------------------------------

def bench_copy(device: DeviceLike, nbytes: int = 64 * MiB, *, config: BenchConfig = QUICK,
               peak: Peak | None = None) -> BenchResult:
    """Memory bandwidth of ``dst.copy_(src)`` on ``device``, counting bytes read + written."""
    import torch

    dev = torch.device(device)
    name = str(device)
    count = nbytes // 4
    nbytes = count * 4
    pairs_wanted = _buffer_count(2 * nbytes, _cache_bytes(dev), _memory_budget(dev), minimum=2, maximum=4)
    if pairs_wanted == 0:
        return BenchResult("copy", name, size=nbytes, skipped=f"not enough free memory for 2 × 2 × {nbytes // MiB} MiB")
    threads = cpu_threads() if dev.type == "cpu" else None
    peak = peak if peak is not None else device_peak(dev)
    # uniform in [0.5, 1.5): cheaper to draw than normal numbers, and never zero
    pairs = [(torch.rand(count, device=dev) + 0.5, torch.rand(count, device=dev) + 0.5) for _ in range(pairs_wanted)]
    next_pair = _cycle(pairs)

    def call() -> None:
        src, dst = next_pair()
        dst.copy_(src)

    threading = _torch_threads(threads) if threads else contextlib.nullcontext()
    with threading:
        measurement = Timer(call, device=dev, warmup=config.warmup, repeats=config.repeats,
                            min_repeat_time=config.min_repeat_time).measure()
    del pairs
    peak_value = peak.memory_gbps if peak else None
    return _result("copy", name, measurement, 2.0 * nbytes, 1e9, "GB/s", peak_value,
                   peak.name if peak else None, bool(peak and peak.estimate), size=nbytes, threads=threads)


# ---------------------------------------------------------------------------------------------
# host <-> device transfers
# ---------------------------------------------------------------------------------------------

def _link_peak(dev: Any) -> tuple[float | None, str | None]:
    """The PCIe link's one-direction peak for CUDA device ``dev``, from ``nvidia-smi``."""
    import torch

    try:
        gpus = nvidia.driver_report().get("devices", [])
        props = torch.cuda.get_device_properties(dev)
        uuid = str(getattr(props, "uuid", "") or "").lower().removeprefix("gpu-")
        match = [g for g in gpus if uuid and str(g.get("uuid") or "").lower().removeprefix("gpu-") == uuid]
        if not match:
            match = [g for g in gpus if g.get("name") == props.name] if len(gpus) == 1 or \
                len({g.get("name") for g in gpus}) == len(gpus) else []
        if match and match[0].get("pcie_peak_gbps"):
            g = match[0]
            return g["pcie_peak_gbps"], f"PCIe {g['pcie_link_gen']}.0 x{g['pcie_link_width']}"
    except Exception:  # noqa: BLE001 - no peak is fine
        pass
    return None, None


def bench_transfer(device: DeviceLike, nbytes: int = 64 * MiB, *, direction: str = "h2d",
                   pinned: bool = True, config: BenchConfig = QUICK) -> BenchResult:
    """Host→device (``"h2d"``) or device→host (``"d2h"``) copy bandwidth, pageable or pinned."""
    import torch

    if direction not in ("h2d", "d2h"):
        raise ValueError(f"direction must be 'h2d' or 'd2h', got {direction!r}")
    dev = torch.device(device)
    name, variant = str(device), "pinned" if pinned else "pageable"
    if dev.type != "cuda":
        why = ("no accelerator: host and device are the same memory" if dev.type == "cpu"
               else f"{dev.type} shares memory with the host; no separate transfer to measure")
        return BenchResult(direction, name, variant=variant, size=nbytes, skipped=why)
    count = nbytes // 4
    nbytes = count * 4
    host_buffers = [torch.randn(count) for _ in range(2)]
    if pinned:
        host_buffers = [b.pin_memory() for b in host_buffers]
    device_buffers = [torch.randn(count, device=dev) for _ in range(2)]
    pairs = list(zip(host_buffers, device_buffers)) if direction == "h2d" else list(zip(device_buffers, host_buffers))
    next_pair = _cycle(pairs)

    def call() -> None:
        src, dst = next_pair()
        dst.copy_(src, non_blocking=pinned)

    # Pageable copies are driven by the host (staging through a driver buffer), so time them
    # on the host clock around a synchronisation rather than with events on one stream.
    measurement = Timer(call, device=dev, warmup=config.warmup, repeats=config.repeats,
                        min_repeat_time=config.min_repeat_time, use_events=False).measure()
    del pairs, host_buffers, device_buffers
    peak, link = _link_peak(dev)
    return _result(direction, name, measurement, float(nbytes), 1e9, "GB/s", peak, link, False,
                   variant=variant, size=nbytes)


# ---------------------------------------------------------------------------------------------
# everything
# ---------------------------------------------------------------------------------------------

def default_devices() -> list[str]:
    """The CPU, plus the device the labs would use if it is not the CPU."""
    best = str(pick_device())
    return ["cpu"] if best == "cpu" else ["cpu", best]


def _failed(kind: str, device: str, exc: BaseException, **extra: Any) -> BenchResult:
    return BenchResult(kind, device, skipped=f"failed: {type(exc).__name__}: {exc}"[:300], **extra)


def run_benchmarks(devices: Iterable[DeviceLike] | None = None, *, quick: bool = False,
                   dtypes: Iterable[str] = DTYPES, kinds: Iterable[str] = KINDS,
                   config: BenchConfig | None = None,
                   progress: Callable[[str], None] | None = None) -> list[BenchResult]:
    """Run the benchmarks on ``devices`` (default: the CPU and the labs' device).

    Never raises for a device problem: a benchmark that fails is returned with ``skipped``
    starting with ``"failed:"``, and an unsupported combination with the reason.

    Example:
        >>> results = run_benchmarks(["cpu"], quick=True, kinds=["matmul"])  # doctest: +SKIP
        >>> results[0].label, round(results[0].fraction_of_peak, 2)            # doctest: +SKIP
        ('cpu matmul fp32', 0.41)
    """
    import torch

    config = config or (QUICK if quick else FULL)
    kinds = tuple(kinds)
    unknown = set(kinds) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown benchmark kinds {sorted(unknown)}: expected {', '.join(KINDS)}")
    say = progress or (lambda message: None)
    results: list[BenchResult] = []
    for device in devices if devices is not None else default_devices():
        name = str(device)
        if not is_usable(device):
            results.append(BenchResult("matmul", name, unit="TFLOP/s", skipped="device not available on this machine"))
            continue
        dev = torch.device(device)
        dev_type = dev.type
        peak = device_peak(dev)
        if "matmul" in kinds:
            for dtype in dtypes:
                predicted = 0.0
                for n in config.matmul_sizes.get(dev_type, config.matmul_sizes["cpu"]):
                    if predicted > config.max_call_seconds:
                        results.append(BenchResult("matmul", name, dtype, size=n, unit="TFLOP/s",
                                                   skipped=f"skipped: about {predicted:.1f} s per call"))
                        continue
                    say(f"matmul {dtype} {n}×{n} on {name}")
                    try:
                        result = bench_matmul(dev, dtype, n, config=config, peak=peak)
                    except Exception as exc:  # noqa: BLE001
                        result = _failed("matmul", name, exc, dtype=dtype, size=n, unit="TFLOP/s")
                    results.append(result)
                    if result.value is None:
                        break  # unsupported or failed: bigger sizes will not do better
                    predicted = (result.timing or {}).get("median_s", 0.0) * 8
        if "copy" in kinds:
            size = config.copy_bytes.get(dev_type, config.copy_bytes["cpu"])
            say(f"copy {size // MiB} MiB on {name}")
            try:
                results.append(bench_copy(dev, size, config=config, peak=peak))
            except Exception as exc:  # noqa: BLE001
                results.append(_failed("copy", name, exc, size=size))
        if "transfer" in kinds:
            for direction in ("h2d", "d2h"):
                for pinned in (False, True):
                    variant = "pinned" if pinned else "pageable"
                    if dev_type == "cuda":
                        say(f"{direction} {variant} {config.transfer_bytes // MiB} MiB on {name}")
                    try:
                        results.append(bench_transfer(dev, config.transfer_bytes, direction=direction,
                                                      pinned=pinned, config=config))
                    except Exception as exc:  # noqa: BLE001
                        results.append(_failed(direction, name, exc, variant=variant, size=config.transfer_bytes))
        if dev_type == "cuda":
            torch.cuda.empty_cache()
    return results


def best_by_dtype(results: Iterable[BenchResult]) -> dict[tuple[str, str], BenchResult]:
    """The fastest matmul per (device, dtype) over sizes."""
    best: dict[tuple[str, str], BenchResult] = {}
    for r in results:
        if r.kind == "matmul" and r.value is not None and r.dtype:
            key = (r.device, r.dtype)
            if key not in best or r.value > (best[key].value or 0):
                best[key] = r
    return best
