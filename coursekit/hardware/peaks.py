"""Known peak throughput of common accelerators, and an estimate for the CPU.

A measured figure means little alone: 40 TFLOP/s is excellent on an RTX 3090 and poor on an
H100. The benchmarks therefore report each figure as a fraction of the part's peak.

NOTE [which peak]
    * Matrix figures are *dense* tensor-core rates. NVIDIA's datasheets for Ampere and later
      data-centre parts quote TF32/BF16/FP16 "with sparsity" (2:4 structured sparsity, which a
      plain ``torch.matmul`` never uses); the dense rate is half of that, and half is what this
      table holds.
    * ``fp32`` is the CUDA-core (non-tensor) FP32 rate, which is what an FP32 matmul gets when
      TF32 is off (PyTorch's default for matmul).
    * GeForce cards quote FP16 tensor rates with FP16 accumulation, twice the rate with FP32
      accumulation. cuBLAS accumulates in FP32 for PyTorch's fp16/bf16 matmul, so the table
      holds the FP32-accumulate rate.
    * ``memory_gbps`` is the datasheet memory bandwidth in GB/s (10^9 bytes per second).
    * A missing dtype means the part has no tensor-core path for it (T4 has no TF32 or BF16).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from .host import CpuInfo, cpu_info

DTYPES = ("fp32", "tf32", "bf16", "fp16")


@dataclass(frozen=True)
class Peak:
    """The peak rates of one part.

    Attributes:
        name: the part, e.g. ``"H100 SXM"``.
        tflops: dense matmul TFLOP/s per dtype (``"fp32"``, ``"tf32"``, ``"bf16"``, ``"fp16"``).
        memory_gbps: memory bandwidth in GB/s, ``None`` where unknown (CPUs).
        source: where the figures come from, or how an estimate was computed.
        estimate: ``True`` for a computed estimate rather than a vendor figure.
    """

    name: str
    tflops: Mapping[str, float] = field(default_factory=dict)
    memory_gbps: float | None = None
    source: str = ""
    estimate: bool = False

    def matmul_tflops(self, dtype: str) -> float | None:
        return self.tflops.get(dtype)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "tflops": dict(self.tflops),
            "memory_gbps": self.memory_gbps,
            "source": self.source,
            "estimate": self.estimate,
        }


_H100_DS = "NVIDIA H100 Tensor Core GPU datasheet (tensor rates there are with sparsity; halved here)"
_H200_DS = "NVIDIA H200 Tensor Core GPU datasheet (tensor rates there are with sparsity; halved here)"
_A100_DS = "NVIDIA A100 Tensor Core GPU datasheet (dense rates; the '*' figures there are with sparsity)"
_L4_DS = "NVIDIA L4 Tensor Core GPU datasheet (tensor rates there are with sparsity; halved here)"
_T4_DS = "NVIDIA T4 Tensor Core GPU datasheet (Turing: FP16 tensor cores, no TF32 or BF16)"
_GA102 = "NVIDIA Ampere GA102 GPU architecture whitepaper, GeForce RTX 3090 column (dense, FP32 accumulate)"
_AD102 = "NVIDIA Ada GPU architecture whitepaper, GeForce RTX 4090 column (dense, FP32 accumulate)"

GPU_PEAKS: dict[str, Peak] = {
    "H100 SXM": Peak(
        "H100 SXM",
        # H100 whitepaper (SXM5, boost clock): FP32 66.9; TF32 494.7, BF16/FP16 989.4 dense
        # (datasheet: 67 / 989* / 1,979* with sparsity).
        {"fp32": 66.9, "tf32": 494.7, "bf16": 989.4, "fp16": 989.4},
        3350.0,  # datasheet: 3.35 TB/s HBM3
        _H100_DS,
    ),
    "H100 PCIe": Peak(
        "H100 PCIe",
        # datasheet: FP32 51; TF32 756*, BF16/FP16 1,513* with sparsity.
        {"fp32": 51.2, "tf32": 378.0, "bf16": 756.5, "fp16": 756.5},
        2000.0,  # datasheet: 2 TB/s HBM2e
        _H100_DS,
    ),
    "H100 NVL": Peak(
        "H100 NVL",
        # datasheet (per GPU): FP32 60; TF32 835*, BF16/FP16 1,671* with sparsity.
        {"fp32": 60.0, "tf32": 417.5, "bf16": 835.5, "fp16": 835.5},
        3900.0,  # datasheet: 3.9 TB/s HBM3, 94 GB
        _H100_DS,
    ),
    "H200 SXM": Peak(
        "H200 SXM",
        # datasheet: same Hopper compute as H100 SXM: FP32 67; TF32 989*, BF16/FP16 1,979*.
        {"fp32": 67.0, "tf32": 494.5, "bf16": 989.5, "fp16": 989.5},
        4800.0,  # datasheet: 4.8 TB/s HBM3e, 141 GB
        _H200_DS,
    ),
    "H200 NVL": Peak(
        "H200 NVL",
        # datasheet: FP32 60; TF32 835*, BF16/FP16 1,671* with sparsity.
        {"fp32": 60.0, "tf32": 417.5, "bf16": 835.5, "fp16": 835.5},
        4800.0,  # datasheet: 4.8 TB/s HBM3e
        _H200_DS,
    ),
    "A100 SXM4 40GB": Peak(
        "A100 SXM4 40GB",
        # datasheet: FP32 19.5; TF32 156, BF16 312, FP16 312 (dense).
        {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0, "fp16": 312.0},
        1555.0,  # datasheet: 1,555 GB/s HBM2
        _A100_DS,
    ),
    "A100 SXM4 80GB": Peak(
        "A100 SXM4 80GB",
        {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0, "fp16": 312.0},  # as the 40 GB part
        2039.0,  # datasheet: 2,039 GB/s HBM2e
        _A100_DS,
    ),
    "A100 PCIe 40GB": Peak(
        "A100 PCIe 40GB",
        {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0, "fp16": 312.0},  # datasheet: same peaks as SXM4
        1555.0,  # datasheet: 1,555 GB/s HBM2
        _A100_DS,
    ),
    "A100 PCIe 80GB": Peak(
        "A100 PCIe 80GB",
        {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0, "fp16": 312.0},  # datasheet: same peaks as SXM4
        1935.0,  # datasheet: 1,935 GB/s HBM2e
        _A100_DS,
    ),
    "L4": Peak(
        "L4",
        # datasheet: FP32 30.3; TF32 120*, BF16/FP16 242* with sparsity.
        {"fp32": 30.3, "tf32": 60.0, "bf16": 121.0, "fp16": 121.0},
        300.0,  # datasheet: 300 GB/s GDDR6
        _L4_DS,
    ),
    "T4": Peak(
        "T4",
        # datasheet: FP32 8.1; mixed-precision FP16/FP32 tensor 65 (no sparsity on Turing).
        {"fp32": 8.1, "fp16": 65.0},
        320.0,  # datasheet: 320 GB/s GDDR6
        _T4_DS,
    ),
    "RTX 3090": Peak(
        "RTX 3090",
        # GA102 whitepaper: FP32 35.6; TF32 35.6; FP16 and BF16 tensor 71 with FP32 accumulate
        # (142 with FP16 accumulate). The lecture's "~35.6 TFLOPS FP32" is the first figure.
        {"fp32": 35.6, "tf32": 35.6, "bf16": 71.0, "fp16": 71.0},
        936.0,  # whitepaper: 936 GB/s GDDR6X
        _GA102,
    ),
    "RTX 4090": Peak(
        "RTX 4090",
        # Ada whitepaper: FP32 82.6; TF32 82.6; FP16/BF16 tensor 165.2 with FP32 accumulate
        # (330.3 with FP16 accumulate).
        {"fp32": 82.6, "tf32": 82.6, "bf16": 165.2, "fp16": 165.2},
        1008.0,  # whitepaper: 1,008 GB/s GDDR6X
        _AD102,
    ),
}


def _normalise(name: str) -> str:
    return " ".join(re.sub(r"[-_/()]", " ", name.lower()).split())


def lookup_gpu(name: str, memory_bytes: int | None = None) -> Peak | None:
    """The known peak of a GPU from the name its driver reports, or ``None``.

    Handles the spellings drivers use: ``"NVIDIA H100 80GB HBM3"`` is the SXM part and
    ``"NVIDIA H100 PCIe"`` the PCIe card; ``"NVIDIA A100-SXM4-80GB"``, ``"Tesla T4"``,
    ``"NVIDIA GeForce RTX 4090"``. Look-alikes are *not* matched (``GH200``, ``RTX 3090 Ti``,
    ``RTX 4090 D``, laptop parts), and neither is a MIG slice, which has a fraction of the SMs.
    ``memory_bytes`` tells the A100 40 GB and 80 GB apart when the name does not.
    """
    n = _normalise(name)
    if not n or re.search(r"\bmig\b", n):
        return None
    if re.search(r"\b(laptop|mobile|max q)\b", n):
        return None
    if re.search(r"\bh200\b", n):
        return GPU_PEAKS["H200 NVL" if "nvl" in n else "H200 SXM"]
    if re.search(r"\bh100\b", n):
        if "nvl" in n:
            return GPU_PEAKS["H100 NVL"]
        if "pcie" in n:
            return GPU_PEAKS["H100 PCIe"]
        return GPU_PEAKS["H100 SXM"]  # "H100 80GB HBM3", "H100 SXM5 80GB"
    if re.search(r"\ba100\b", n):
        if "80gb" in n:
            big = True
        elif "40gb" in n:
            big = False
        else:
            big = memory_bytes is not None and memory_bytes > 60 * 1024**3
        form = "PCIe" if "pcie" in n else "SXM4"
        return GPU_PEAKS[f"A100 {form} {'80GB' if big else '40GB'}"]
    if re.search(r"\bl4\b", n):
        return GPU_PEAKS["L4"]
    if re.search(r"\bt4\b", n):
        return GPU_PEAKS["T4"]
    if re.search(r"\b3090\b(?! ti\b)", n):
        return GPU_PEAKS["RTX 3090"]
    if re.search(r"\b4090\b(?! d\b)", n):
        return GPU_PEAKS["RTX 4090"]
    return None


# ---------------------------------------------------------------------------------------------
# CPU estimate
# ---------------------------------------------------------------------------------------------

def cpu_flops_per_cycle(cpu: CpuInfo) -> tuple[dict[str, int], str]:
    """FLOPs per cycle per core for each dtype, from the ISA, and a one-line basis.

    NOTE [CPU FLOPs per cycle]
        A fused multiply-add counts as 2 FLOPs; a SIMD unit of width W bits does W/32 FP32
        lanes. Most x86 cores since Haswell / Zen 2 have two 256-bit FMA units:
        2 units x 8 lanes x 2 = 32 FP32 FLOPs/cycle. Server Intel parts with AVX-512 have
        two 512-bit units (64); AMD Zen 4 runs AVX-512 as two 256-bit halves (32), Zen 5 has a
        full 512-bit path (64). ``avx512_bf16`` dot products double the FP32 rate; Intel AMX
        does 1024 BF16 (or FP16 with amx_fp16) FLOPs/cycle per core. The flags cannot tell
        how many FMA units a part has, so this is an estimate and is labelled one.
    """
    flags = cpu.flags
    arch = (cpu.architecture or "").lower()
    vendor = (cpu.vendor or "").lower()
    per: dict[str, int] = {}
    if arch in ("x86_64", "amd64", "i386", "i686", "x86"):
        if "avx512f" in flags:
            amd = "amd" in vendor
            wide = not amd or (cpu.family or 0) >= 26
            per["fp32"] = 64 if wide else 32
            basis = "AVX-512, two 512-bit FMA units" if wide else "AVX-512 on two 256-bit FMA units (Zen 4)"
        elif "avx2" in flags and "fma" in flags:
            per["fp32"], basis = 32, "AVX2 + FMA, two 256-bit FMA units"
        elif "avx" in flags:
            per["fp32"], basis = 16, "AVX without FMA, one add and one multiply unit"
        else:
            per["fp32"], basis = 8, "SSE, 128-bit add and multiply"
        if "amx_bf16" in flags:
            per["bf16"] = 1024
            basis += "; AMX BF16 1024 FLOPs/cycle"
        elif "avx512_bf16" in flags:
            per["bf16"] = 2 * per["fp32"]
            basis += "; AVX512-BF16 at twice the FP32 rate"
        if "amx_fp16" in flags:
            per["fp16"] = 1024
            basis += "; AMX FP16 1024 FLOPs/cycle"
        elif "avx512_fp16" in flags:
            per["fp16"] = 2 * per["fp32"]
            basis += "; AVX512-FP16 at twice the FP32 rate"
    elif arch in ("aarch64", "arm64"):
        if vendor == "apple" or "sve" in flags:
            per["fp32"], basis = 32, "Arm, four 128-bit (or two 256-bit SVE) FMA pipes"
        else:
            per["fp32"], basis = 16, "Arm NEON, two 128-bit FMA pipes"
    else:
        per["fp32"], basis = 8, f"unknown architecture {arch or '?'}: a guess of 8 FLOPs/cycle"
    return per, basis


def cpu_peak(cpu: CpuInfo | None = None, cores: int | None = None) -> Peak:
    """Estimated peak matmul rate of this CPU: cores x clock x FLOPs/cycle.

    ``cores`` defaults to the physical cores this process may use (what the benchmarks use).
    Memory bandwidth is left unknown: it depends on the number of memory channels and DIMM
    speed, which an unprivileged process cannot read.
    """
    cpu = cpu or cpu_info()
    cores = cores or cpu.compute_cores
    per_cycle, basis = cpu_flops_per_cycle(cpu)
    name = f"CPU ({cpu.model or 'unknown model'})"
    if not cpu.clock_ghz:
        return Peak(name, {}, None, f"estimate impossible: clock unknown ({basis})", estimate=True)
    tflops = {dtype: round(cores * cpu.clock_ghz * f / 1000, 6) for dtype, f in per_cycle.items()}
    source = (f"estimate: {cores} core{'s' if cores != 1 else ''} x {cpu.clock_ghz:.2f} GHz x "
              f"{per_cycle['fp32']} FP32 FLOPs/cycle ({basis}); clock from {cpu.clock_source}")
    return Peak(name, tflops, None, source, estimate=True)
