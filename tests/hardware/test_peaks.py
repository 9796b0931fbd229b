"""The table of known peaks, GPU name matching, and the CPU estimate."""
from __future__ import annotations

import pytest

from coursekit.hardware.host import CpuInfo
from coursekit.hardware.peaks import DTYPES, GPU_PEAKS, cpu_flops_per_cycle, cpu_peak, lookup_gpu

GiB = 1024**3


@pytest.mark.parametrize("reported, expected", [
    ("NVIDIA H100 80GB HBM3", "H100 SXM"),
    ("NVIDIA H100 SXM5 80GB", "H100 SXM"),
    ("NVIDIA H100 PCIe", "H100 PCIe"),
    ("NVIDIA H100 NVL", "H100 NVL"),
    ("NVIDIA H200", "H200 SXM"),
    ("NVIDIA H200 NVL", "H200 NVL"),
    ("NVIDIA A100-SXM4-40GB", "A100 SXM4 40GB"),
    ("NVIDIA A100-SXM4-80GB", "A100 SXM4 80GB"),
    ("NVIDIA A100-PCIE-40GB", "A100 PCIe 40GB"),
    ("NVIDIA A100 80GB PCIe", "A100 PCIe 80GB"),
    ("NVIDIA L4", "L4"),
    ("Tesla T4", "T4"),
    ("NVIDIA GeForce RTX 3090", "RTX 3090"),
    ("NVIDIA GeForce RTX 4090", "RTX 4090"),
    ("h100 sxm", "H100 SXM"),
])
def test_driver_names_map_to_the_right_part(reported: str, expected: str) -> None:
    peak = lookup_gpu(reported)
    assert peak is not None and peak.name == expected


@pytest.mark.parametrize("reported", [
    "NVIDIA GH200 480GB",                      # contains "h200" but is a different part
    "NVIDIA GeForce RTX 3090 Ti",
    "NVIDIA GeForce RTX 4090 D",
    "NVIDIA GeForce RTX 4090 Laptop GPU",
    "NVIDIA L40S",
    "NVIDIA A10",
    "NVIDIA H100 80GB HBM3 MIG 1g.10gb",       # a slice has a fraction of the SMs
    "Apple M2",
    "",
])
def test_look_alikes_and_unknown_parts_are_not_matched(reported: str) -> None:
    assert lookup_gpu(reported) is None


def test_a100_without_size_in_the_name_uses_the_memory_size() -> None:
    assert lookup_gpu("NVIDIA A100", memory_bytes=80 * GiB).name == "A100 SXM4 80GB"
    assert lookup_gpu("NVIDIA A100", memory_bytes=40 * GiB).name == "A100 SXM4 40GB"


def test_the_parts_the_course_names_are_all_in_the_table() -> None:
    for part in ("H100 SXM", "H100 PCIe", "H200 SXM", "A100 SXM4 40GB", "A100 SXM4 80GB", "L4", "T4",
                 "RTX 3090", "RTX 4090"):
        assert part in GPU_PEAKS


@pytest.mark.parametrize("name", sorted(GPU_PEAKS))
def test_every_entry_is_consistent(name: str) -> None:
    peak = GPU_PEAKS[name]
    assert peak.name == name and peak.source and not peak.estimate
    assert set(peak.tflops) <= set(DTYPES) and "fp32" in peak.tflops
    assert peak.memory_gbps and peak.memory_gbps > 100
    # tensor-core paths are never slower than plain FP32, and 16-bit never slower than TF32
    for dtype in ("tf32", "bf16", "fp16"):
        if dtype in peak.tflops:
            assert peak.tflops[dtype] >= peak.tflops["fp32"]
    if "tf32" in peak.tflops and "bf16" in peak.tflops:
        assert peak.tflops["bf16"] == pytest.approx(2 * peak.tflops["tf32"], rel=0.02)


def test_dense_not_sparse_figures_are_stored() -> None:
    # The H100 SXM datasheet says 1,979 BF16 TFLOP/s *with sparsity*; a matmul gets half at best.
    assert GPU_PEAKS["H100 SXM"].tflops["bf16"] < 1000
    assert GPU_PEAKS["A100 SXM4 40GB"].tflops["fp16"] == 312.0
    assert "tf32" not in GPU_PEAKS["T4"].tflops and "bf16" not in GPU_PEAKS["T4"].tflops


def _cpu(**kw) -> CpuInfo:
    base = dict(model="Test", vendor="GenuineIntel", architecture="x86_64", family=6, physical_cores=4,
                logical_cores=8, usable_cores=8, clock_ghz=2.5, clock_source="test",
                flags=frozenset({"avx", "avx2", "fma"}))
    base.update(kw)
    return CpuInfo(**base)


@pytest.mark.parametrize("vendor, family, flags, fp32", [
    ("GenuineIntel", 6, {"avx", "avx2", "fma"}, 32),
    ("AuthenticAMD", 25, {"avx", "avx2", "fma"}, 32),
    ("GenuineIntel", 6, {"avx", "avx2", "fma", "avx512f"}, 64),
    ("AuthenticAMD", 25, {"avx", "avx2", "fma", "avx512f"}, 32),   # Zen 4: two 256-bit halves
    ("AuthenticAMD", 26, {"avx", "avx2", "fma", "avx512f"}, 64),   # Zen 5
    ("GenuineIntel", 6, {"avx"}, 16),
    ("GenuineIntel", 6, set(), 8),
])
def test_flops_per_cycle_follow_the_isa(vendor: str, family: int, flags: set, fp32: int) -> None:
    per, basis = cpu_flops_per_cycle(_cpu(vendor=vendor, family=family, flags=frozenset(flags)))
    assert per["fp32"] == fp32 and basis


def test_bf16_and_fp16_only_with_matrix_instructions() -> None:
    plain, _ = cpu_flops_per_cycle(_cpu())
    assert set(plain) == {"fp32"}
    amx, basis = cpu_flops_per_cycle(_cpu(flags=frozenset({"avx2", "fma", "avx512f", "amx_bf16", "amx_fp16"})))
    assert amx["bf16"] == 1024 and amx["fp16"] == 1024 and "AMX" in basis
    dot, _ = cpu_flops_per_cycle(_cpu(flags=frozenset({"avx2", "fma", "avx512f", "avx512_bf16"})))
    assert dot["bf16"] == 2 * dot["fp32"]


def test_cpu_peak_is_cores_times_clock_times_flops_per_cycle_and_says_it_is_an_estimate() -> None:
    peak = cpu_peak(_cpu(physical_cores=4, usable_cores=8, clock_ghz=2.5))
    assert peak.estimate
    assert peak.tflops["fp32"] == pytest.approx(4 * 2.5e9 * 32 / 1e12)
    assert "estimate" in peak.source and "4 cores" in peak.source
    assert peak.memory_gbps is None


def test_cpu_peak_counts_only_cores_we_may_use() -> None:
    peak = cpu_peak(_cpu(physical_cores=16, usable_cores=2))
    assert "2 cores" in peak.source
    assert cpu_peak(_cpu(), cores=1).tflops["fp32"] == pytest.approx(2.5 * 32 / 1000)


def test_cpu_peak_without_a_clock_has_no_rates() -> None:
    peak = cpu_peak(_cpu(clock_ghz=None))
    assert peak.tflops == {} and "clock unknown" in peak.source


def test_cpu_peak_on_this_machine_is_positive() -> None:
    peak = cpu_peak()
    if peak.tflops:
        assert peak.tflops["fp32"] > 0
