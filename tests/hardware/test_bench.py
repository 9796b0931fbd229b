"""Benchmarks: sane numbers on the CPU, honest inputs, skips with reasons; GPU where present."""
from __future__ import annotations

import pytest
import torch

from coursekit.hardware import bench
from coursekit.hardware.bench import BenchConfig, BenchResult, bench_copy, bench_matmul, bench_transfer, run_benchmarks

from .conftest import has_cuda, requires_cuda

TINY = BenchConfig(matmul_sizes={"cpu": (64,), "cuda": (256,)}, copy_bytes={"cpu": 1024**2, "cuda": 1024**2},
                   transfer_bytes=1024**2, warmup=1, repeats=3, min_repeat_time=0.001)


# --- from the real `coursekit doctor --bench --quick --json` run ------------------------------

def measured(doctor_run, **match) -> list[dict]:
    return [r for r in doctor_run.report["bench"]["results"]
            if r["value"] is not None and all(r.get(k) == v for k, v in match.items())]


def test_quick_bench_measures_cpu_matmul_as_a_fraction_of_the_estimated_peak(doctor_run) -> None:
    (result,) = measured(doctor_run, kind="matmul", device="cpu", dtype="fp32")
    assert result["unit"] == "TFLOP/s" and 1e-4 < result["value"] < 50
    assert result["peak_is_estimate"] is True and result["peak"] > 0
    assert 0 < result["fraction_of_peak"] < 3  # an estimate: turbo clocks may beat it, but not by 3x
    assert result["fraction_of_peak"] == pytest.approx(result["value"] / result["peak"])
    assert result["threads"] >= 1 and result["timing"]["repeats"] >= 3
    assert result["work_per_call"] == 2 * result["size"] ** 3


def test_quick_bench_measures_cpu_copy_bandwidth_counting_read_and_write(doctor_run) -> None:
    (result,) = measured(doctor_run, kind="copy", device="cpu")
    assert result["unit"] == "GB/s" and 0.1 < result["value"] < 2000
    assert result["work_per_call"] == 2 * result["size"]
    assert result["peak"] is None and result["fraction_of_peak"] is None  # RAM bandwidth is not knowable here


def test_quick_bench_says_why_each_unmeasured_figure_is_missing(doctor_run) -> None:
    bench_section = doctor_run.report["bench"]
    assert bench_section["quick"] is True and "cpu" in bench_section["devices"]
    for r in bench_section["results"]:
        assert (r["value"] is None) == bool(r["skipped"]), r
    cpu_peak = bench_section["peaks"]["cpu"]
    assert cpu_peak["estimate"] is True and "FLOPs/cycle" in cpu_peak["source"]
    if not has_cuda():
        transfers = [r for r in bench_section["results"] if r["kind"] in ("h2d", "d2h")]
        assert len(transfers) == 4 and all("no accelerator" in r["skipped"] for r in transfers)


# --- in-process, small sizes ------------------------------------------------------------------

def test_matmul_inputs_are_random_and_rotated_never_zeros(monkeypatch) -> None:
    seen = []
    real = torch.matmul

    def spy(a, b, **kw):
        seen.append((a.data_ptr(), b.data_ptr(), bool((a != 0).any()), bool((b != 0).any())))
        return real(a, b, **kw)

    monkeypatch.setattr(torch, "matmul", spy)
    result = bench_matmul("cpu", "fp32", 64, config=TINY)
    assert result.value and result.value > 0
    assert all(a_nonzero and b_nonzero for _, _, a_nonzero, b_nonzero in seen)
    inputs = {(a, b) for a, b, _, _ in seen}
    # 64x64 fp32 inputs are 32 KiB a pair: enough pairs rotate to overflow the last-level cache twice
    assert len(inputs) > 2


def test_buffer_count_overflows_the_cache_within_budget() -> None:
    assert bench._buffer_count(set_bytes=1 << 20, cache_bytes=32 << 20, budget=1 << 30) == 64
    assert bench._buffer_count(set_bytes=16 << 20, cache_bytes=32 << 20, budget=1 << 30) == 4
    assert bench._buffer_count(set_bytes=1 << 30, cache_bytes=32 << 20, budget=8 << 30) == 2
    assert bench._buffer_count(set_bytes=1 << 20, cache_bytes=32 << 20, budget=10 << 20) == 10
    assert bench._buffer_count(set_bytes=1 << 30, cache_bytes=32 << 20, budget=1 << 30) == 0


@pytest.mark.skipif(has_cuda(), reason="checks the CPU-only skips")
def test_unsupported_combinations_are_skipped_with_reasons_on_this_cpu() -> None:
    tf32 = bench_matmul("cpu", "tf32", 64, config=TINY)
    assert tf32.value is None and "TF32" in tf32.skipped
    transfer = bench_transfer("cpu", 1024**2, direction="h2d", pinned=True, config=TINY)
    assert transfer.value is None and "no accelerator" in transfer.skipped
    missing = run_benchmarks(["cuda:0"], config=TINY)
    assert [r.skipped for r in missing] == ["device not available on this machine"]


def test_copy_on_cpu_is_positive_and_uses_explicit_threads() -> None:
    result = bench_copy("cpu", 1024**2, config=TINY)
    assert result.value > 0 and result.threads == bench.cpu_threads()
    assert torch.get_num_threads() >= 1  # restored afterwards


def test_run_benchmarks_returns_results_with_labels_and_dicts() -> None:
    results = run_benchmarks(["cpu"], config=TINY, dtypes=["fp32"], kinds=["matmul", "copy"])
    assert [r.label for r in results] == ["cpu matmul fp32", "cpu copy"]
    assert all(isinstance(r, BenchResult) and r.as_dict()["device"] == "cpu" for r in results)
    best = bench.best_by_dtype(results)
    assert best[("cpu", "fp32")] is results[0]


def test_unknown_kind_or_direction_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown benchmark kinds"):
        run_benchmarks(["cpu"], config=TINY, kinds=["flops"])
    with pytest.raises(ValueError, match="direction"):
        bench_transfer("cpu", 1024, direction="sideways")


def test_a_failing_benchmark_is_recorded_not_raised(monkeypatch) -> None:
    def boom(*args, **kw):
        raise RuntimeError("simulated out of memory")

    monkeypatch.setattr(bench, "bench_copy", boom)
    (result,) = run_benchmarks(["cpu"], config=TINY, kinds=["copy"])
    assert result.value is None and result.skipped.startswith("failed: RuntimeError: simulated")


def test_plot_bench_draws_one_bar_per_measured_result(doctor_run) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from coursekit.hardware import plot_bench

    n = len(measured(doctor_run))
    ax = plot_bench(doctor_run.report)
    assert len(ax.patches) == n and n >= 2
    assert ax.get_xlabel() == "fraction of the device's peak"
    ax2 = plot_bench(run_benchmarks(["cpu"], config=TINY, dtypes=["fp32"], kinds=["matmul"]))
    assert len(ax2.patches) == 1


# --- GPU --------------------------------------------------------------------------------------

@pytest.mark.gpu
@requires_cuda
def test_gpu_matmul_in_every_supported_dtype_is_below_peak() -> None:
    config = BenchConfig(matmul_sizes={"cuda": (4096,), "cpu": (64,)}, copy_bytes={"cuda": 256 << 20, "cpu": 1 << 20},
                         transfer_bytes=64 << 20, warmup=3, repeats=5, min_repeat_time=0.01)
    results = run_benchmarks(["cuda"], config=config, kinds=["matmul"])
    measured_ = [r for r in results if r.value is not None]
    assert measured_, [r.skipped for r in results]
    for r in measured_:
        assert r.timing["method"] == "cuda-events"
        if r.fraction_of_peak is not None:
            assert 0.01 < r.fraction_of_peak < 1.1, r


@pytest.mark.gpu
@requires_cuda
def test_pinned_host_to_device_is_faster_than_pageable() -> None:
    config = BenchConfig(matmul_sizes={"cuda": (256,), "cpu": (64,)}, copy_bytes={"cuda": 1 << 20, "cpu": 1 << 20},
                         transfer_bytes=256 << 20, warmup=3, repeats=7, min_repeat_time=0.02)
    pageable = bench_transfer("cuda", 256 << 20, direction="h2d", pinned=False, config=config)
    pinned = bench_transfer("cuda", 256 << 20, direction="h2d", pinned=True, config=config)
    assert pinned.value > pageable.value > 0
    copy = bench_copy("cuda", 1 << 30, config=config)
    assert copy.value > 100
