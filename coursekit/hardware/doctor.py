"""``coursekit doctor``: is this machine ready for the course, and how fast is it?

Usage::

    coursekit doctor                      # the report, in about the time TensorFlow takes to import
    coursekit doctor --bench              # plus matmul / bandwidth / transfer benchmarks
    coursekit doctor --bench --quick      # smaller sizes: seconds, not a minute
    coursekit doctor --bench --device cuda:1
    coursekit doctor --json               # machine-readable, schema below

Exit code: 0 when everything the course needs works (warnings allowed), 1 when something it
needs is broken (a required package missing or not importable, a framework that cannot run
a tiny op on a device it lists), 2 for bad arguments.

Each framework is imported in its own child process with a time limit (``--timeout``), so a
framework that crashes or hangs on import is reported as broken instead of taking the doctor
down. Benchmarks run in this process, with torch, and only if the torch probe succeeded.

JSON output (``--json``)
========================

One JSON object; ``REPORT_SCHEMA`` in ``coursekit/hardware/schema.py`` is the machine-checkable
form of this list. Sizes are bytes, rates are TFLOP/s or GB/s (10^9 bytes/s), times seconds;
``null`` means unknown or not applicable.

``schema_version``
    Integer, currently 1. Bumped only when a field is removed, renamed or changes type.
``tool``
    ``{"name": "coursekit doctor", "version": <coursekit version or null>}``.
``created``
    ISO 8601 time the report was made (UTC).
``status``
    ``"ok"``, ``"warnings"`` (only warnings) or ``"broken"`` (at least one error).
``exit_code``
    The exit code the command returns (0 or 1).
``seconds``
    Wall time taken to build the report.
``machine``
    ``python`` {version, implementation, executable}; ``os`` {system, release, platform};
    ``cpu`` {model, vendor, architecture, physical_cores, logical_cores, usable_cores,
    clock_ghz, clock_source, isa (list of extensions such as "avx2"), last_level_cache_bytes};
    ``memory`` {total_bytes, available_bytes}.
``env``
    The environment variables that change framework behaviour, where set
    (COURSEKIT_DEVICE, CUDA_VISIBLE_DEVICES, OMP_NUM_THREADS, JAX_PLATFORMS, ...).
``packages``
    ``{name: {version, distribution, required, purpose}}`` for numpy, torch, tensorflow, jax,
    jaxlib, nbgrader, jupyterlab, ipywidgets, matplotlib, threadpoolctl; ``version`` is null
    when not installed; ``distribution`` is the installed distribution (e.g. tensorflow-cpu).
``jupyter``
    ``labextensions``: ``{name: {installed, enabled, path}}`` for ``@jupyter/nbgrader`` and
    ``@jupyter-widgets/jupyterlab-manager``; ``server_extensions``: ``{name: enabled}`` for
    nbgrader's server extensions.
``blas``
    ``numpy`` and ``torch``: ``{name, version, threads, detail, ...}`` or null — the BLAS each
    uses (numpy via threadpoolctl / ``numpy.show_config``; torch via ``torch.__config__``).
``frameworks``
    ``{numpy|torch|tensorflow|jax: probe}``; a probe is {``status``: ok / missing / broken /
    timeout, ``version``, ``reason`` (why not ok), ``seconds``, ``devices``, ``details``,
    ``warnings``}. Each device is {``name`` (framework's own: "cuda:0", "GPU:0", "cuda:0"),
    ``kind`` (cpu / gpu / mps / tpu / other), ``description``, ``memory_bytes``,
    ``tiny_op`` {ok, seconds, error}}. ``details`` is framework specific: torch has
    cuda_build, cudnn_version, cuda_available, cuda_device_count, cuda_arch_list, mps_built,
    mps_available; tensorflow has built_with_cuda, cuda_build, cudnn_build,
    physical_devices; jax has default_backend, jaxlib_version.
``gpu``
    From the NVIDIA driver, independent of frameworks: ``driver_present``,
    ``driver_version``, ``cuda_driver_version`` (highest CUDA the driver supports),
    ``nvidia_smi`` (path or null), ``error``, and ``devices``: [{index, name, uuid,
    pci_bus_id, memory_bytes, compute_capability, pcie_link_gen, pcie_link_width,
    pcie_peak_gbps, known_peak (key of the peak table or null)}].
``grading``
    ``monitor_compiled``: whether the grading monitor's compiled module was built (without
    it, ``coursekit autograde`` grades with a weaker monitor and says so).
``findings``
    [{``level``: error / warning / info, ``code`` (stable identifier such as
    "missing:torch" or "tensorflow-no-gpu"), ``message``, ``fix``}], errors first.
``bench``
    null without ``--bench``; else {``quick``, ``devices``, ``seconds``, ``peaks``
    ({device: {name, tflops {dtype: TFLOP/s}, memory_gbps, source, estimate} or null}),
    ``results``}. Each result is {``kind``: matmul / copy / h2d / d2h, ``device``,
    ``dtype`` (fp32 / tf32 / bf16 / fp16 for matmul, else null), ``variant`` (pageable /
    pinned for transfers), ``size`` (n of an n×n matmul, or buffer bytes),
    ``work_per_call`` (FLOPs, or bytes moved; a copy counts read + written), ``value``,
    ``unit`` (TFLOP/s or GB/s), ``peak``, ``peak_name``, ``peak_is_estimate``,
    ``fraction_of_peak``, ``timing`` {median_s, spread (IQR / median), repeats, inner,
    method}, ``threads`` (CPU), ``skipped`` (why there is no value; "failed: ..." for an
    error)}.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from datetime import datetime, timezone
from typing import Any

from . import environment, probes, rules
from .schema import SCHEMA_VERSION

DEFAULT_TIMEOUT = 120.0


def doctor_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the doctor's flags to ``parser`` (called by ``coursekit.cli``)."""
    parser.add_argument("--json", action="store_true",
                        help="print the report as JSON (schema in coursekit.hardware.doctor's docstring)")
    parser.add_argument("--bench", action="store_true",
                        help="also measure matmul throughput, memory bandwidth and host-device transfers")
    parser.add_argument("--quick", action="store_true",
                        help="small benchmark sizes (implies --bench)")
    parser.add_argument("--device", metavar="DEVICE[,DEVICE]",
                        help="benchmark only these torch devices, e.g. cpu or cuda:1 (default: cpu and "
                             "the device the labs use)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help=f"time limit for each framework probe (default {DEFAULT_TIMEOUT:.0f})")
    parser.add_argument("--ascii", action="store_true", help="ASCII markers instead of ✓ ✗")


def _coursekit_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("coursekit")
    except Exception:  # noqa: BLE001 - not installed as a distribution
        return None


def _finite(value: Any) -> Any:
    """The report with NaN and infinities replaced by ``None`` (they are not valid JSON)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _bench_section(report: dict[str, Any], devices: list[str] | None, quick: bool,
                   progress: Any) -> dict[str, Any]:
    """Run the benchmarks if torch works; the ``bench`` section of the report."""
    start = time.perf_counter()
    section: dict[str, Any] = {"quick": quick, "devices": devices or [], "seconds": 0.0, "peaks": {}, "results": []}
    if report["frameworks"].get("torch", {}).get("status") != "ok":
        section["results"].append({
            "kind": "matmul", "device": "cpu", "dtype": None, "variant": None, "size": 0, "work_per_call": 0.0,
            "value": None, "unit": "TFLOP/s", "peak": None, "peak_name": None, "peak_is_estimate": False,
            "fraction_of_peak": None, "timing": None, "threads": None,
            "skipped": "torch does not work here (see findings), so nothing was measured"})
        return section
    from . import bench

    chosen = devices or bench.default_devices()
    section["devices"] = list(chosen)
    results = bench.run_benchmarks(chosen, quick=quick, progress=progress)
    section["results"] = [r.as_dict() for r in results]
    for device in chosen:
        try:
            peak = bench.device_peak(device)
        except Exception:  # noqa: BLE001 - an unusable device has no peak
            peak = None
        section["peaks"][str(device)] = peak.as_dict() if peak else None
    section["seconds"] = time.perf_counter() - start
    return section


def build_report(*, bench: bool = False, quick: bool = False, devices: list[str] | None = None,
                 timeout: float = DEFAULT_TIMEOUT, progress: Any = None,
                 frameworks: tuple[str, ...] = probes.FRAMEWORKS) -> dict[str, Any]:
    """Collect the environment, optionally benchmark, evaluate the rules: the full report dict."""
    start = time.perf_counter()
    say = progress or (lambda message: None)
    say("probing frameworks (numpy, torch, tensorflow, jax) in child processes")
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "coursekit doctor", "version": _coursekit_version()},
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "status": "ok",
        "exit_code": 0,
        "seconds": 0.0,
    }
    report.update(environment.collect_environment(timeout=timeout, frameworks=frameworks))
    report["findings"] = []
    report["bench"] = _bench_section(report, devices, quick, say) if bench else None
    findings = rules.evaluate(report)
    report["findings"] = [f.as_dict() for f in findings]
    report["status"] = rules.status(findings)
    report["exit_code"] = rules.exit_code(findings)
    report["seconds"] = time.perf_counter() - start
    return _finite(report)


def doctor(args: argparse.Namespace) -> int:
    """Run the doctor with parsed arguments; returns the exit code."""
    devices = [d.strip() for d in args.device.split(",") if d.strip()] if getattr(args, "device", None) else None
    as_json = getattr(args, "json", False)
    interactive = not as_json and sys.stderr.isatty()

    def progress(message: str) -> None:
        if interactive:
            print(f"  … {message}", file=sys.stderr, flush=True)

    quick = getattr(args, "quick", False)
    report = build_report(bench=getattr(args, "bench", False) or quick, quick=quick,
                          devices=devices, timeout=getattr(args, "timeout", DEFAULT_TIMEOUT),
                          progress=progress)
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2, allow_nan=False) + "\n")
    else:
        from .report import render

        sys.stdout.write(render(report, ascii_only=True if getattr(args, "ascii", False) else None))
    sys.stdout.flush()
    return int(report["exit_code"])


def main(argv: list[str] | None = None) -> int:
    """``python -m coursekit.hardware.doctor`` (the same as ``coursekit doctor``)."""
    parser = argparse.ArgumentParser(prog="coursekit doctor", description=__doc__.splitlines()[0])
    doctor_arguments(parser)
    return doctor(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
