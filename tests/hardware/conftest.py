"""Fixtures for the hardware tests.

The real doctor imports TensorFlow and JAX in child processes (several seconds each), so it
runs once per session (``doctor_run``) and every test that needs real output shares it. Rule
and rendering tests use synthetic reports from ``make_report`` instead.
"""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest
from machine_load import scaled

REPO = Path(__file__).resolve().parents[2]


def has_cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:  # noqa: BLE001 — a broken driver is "no CUDA"
        return False


requires_cuda = pytest.mark.skipif(not has_cuda(), reason="needs a CUDA device; torch.cuda.is_available() is False here")


@dataclass
class DoctorRun:
    returncode: int
    stdout: str
    stderr: str
    report: dict[str, Any]


@pytest.fixture(scope="session")
def doctor_run() -> DoctorRun:
    """``coursekit doctor --bench --quick --json`` run once, as a real subprocess via the CLI."""
    done = subprocess.run([sys.executable, "-m", "coursekit.cli", "doctor", "--bench", "--quick", "--json"],
                          capture_output=True, text=True, cwd=REPO, timeout=scaled(600))
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError as exc:
        pytest.fail(f"doctor --json printed invalid JSON ({exc}); stderr: {done.stderr[-2000:]}")
    return DoctorRun(done.returncode, done.stdout, done.stderr, report)


def _device(name: str, kind: str = "cpu", ok: bool = True, error: str | None = None,
            description: str | None = None) -> dict[str, Any]:
    return {"name": name, "kind": kind, "description": description, "memory_bytes": None,
            "tiny_op": {"ok": ok, "seconds": 0.001, "error": error}}


def _probe(version: str, devices: list[dict[str, Any]], details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"status": "ok", "version": version, "reason": None, "seconds": 1.0, "devices": devices,
            "details": details or {}, "warnings": []}


_HEALTHY: dict[str, Any] = {
    "schema_version": 1,
    "tool": {"name": "coursekit doctor", "version": "0.1.0"},
    "created": "2025-01-01T00:00:00+00:00",
    "status": "ok",
    "exit_code": 0,
    "seconds": 10.0,
    "machine": {
        "python": {"version": "3.11.7", "implementation": "CPython", "executable": "/usr/bin/python3"},
        "os": {"system": "Linux", "release": "6.8", "platform": "Linux-6.8-x86_64"},
        "cpu": {"model": "Test CPU", "vendor": "GenuineIntel", "architecture": "x86_64", "physical_cores": 4,
                "logical_cores": 8, "usable_cores": 8, "clock_ghz": 3.0, "clock_source": "test",
                "isa": ["avx", "avx2", "fma"], "last_level_cache_bytes": 8 * 1024**2},
        "memory": {"total_bytes": 16 * 1024**3, "available_bytes": 12 * 1024**3},
    },
    "env": {},
    "packages": {
        name: {"version": version, "distribution": name, "required": required, "purpose": "test"}
        for name, version, required in [
            ("numpy", "2.0.0", True), ("torch", "2.13.0", True), ("tensorflow", "2.21.0", True),
            ("jax", "0.10.2", True), ("jaxlib", "0.10.2", True), ("nbgrader", "0.9.6", True),
            ("jupyterlab", "4.6.6", True), ("ipywidgets", "8.1.9", False), ("matplotlib", "3.11.2", False),
            ("threadpoolctl", "3.8.0", False)]
    },
    "jupyter": {
        "labextensions": {
            "@jupyter/nbgrader": {"installed": True, "enabled": True, "path": "/x/@jupyter/nbgrader"},
            "@jupyter-widgets/jupyterlab-manager": {"installed": True, "enabled": True, "path": "/x/w"},
        },
        "server_extensions": {"assignment_list": True, "validate_assignment": True, "formgrader": True,
                              "course_list": True},
    },
    "blas": {"numpy": {"name": "openblas", "version": "0.3", "threads": 8, "detail": None},
             "torch": {"name": "mkl", "version": None, "threads": 4, "detail": None}},
    "frameworks": {
        "numpy": _probe("2.0", [_device("cpu")]),
        "torch": _probe("2.13.0+cpu", [_device("cpu")], {"cuda_build": None, "hip_build": None,
                                                          "cudnn_version": None, "cuda_available": False,
                                                          "cuda_device_count": 0, "cuda_arch_list": [],
                                                          "mps_built": False, "mps_available": False}),
        "tensorflow": _probe("2.21.0", [_device("CPU:0")], {"built_with_cuda": False, "cuda_build": None,
                                                            "cudnn_build": None, "physical_devices": []}),
        "jax": _probe("0.10.2", [_device("cpu:0")], {"default_backend": "cpu", "jaxlib_version": "0.10.2"}),
    },
    "gpu": {"driver_present": False, "driver_version": None, "cuda_driver_version": None, "nvidia_smi": None,
            "devices": [], "error": None},
    "grading": {"monitor_compiled": True},
    "findings": [],
    "bench": None,
}


def gpu_machine(report: dict[str, Any], *, torch_sees_it: bool = True) -> dict[str, Any]:
    """Turn a healthy CPU report into one from a machine with an H100 (driver present)."""
    report["gpu"] = {"driver_present": True, "driver_version": "550.54.15", "cuda_driver_version": "12.4",
                     "nvidia_smi": "/usr/bin/nvidia-smi", "error": None,
                     "devices": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-1", "pci_bus_id": None,
                                  "memory_bytes": 80 * 1024**3, "compute_capability": "9.0", "pcie_link_gen": 5,
                                  "pcie_link_width": 16, "pcie_peak_gbps": 63.0, "known_peak": "H100 SXM"}]}
    if torch_sees_it:
        torch = report["frameworks"]["torch"]
        torch["version"] = "2.13.0+cu126"
        torch["details"].update(cuda_build="12.6", cudnn_version=90100, cuda_available=True, cuda_device_count=1)
        torch["devices"].append(_device("cuda:0", "gpu", description="NVIDIA H100 80GB HBM3"))
    return report


@pytest.fixture
def make_report() -> Callable[[], dict[str, Any]]:
    """A factory of fresh, healthy, CPU-only synthetic reports (mutate them freely)."""
    return lambda: copy.deepcopy(_HEALTHY)


@pytest.fixture
def device_factory() -> Callable[..., dict[str, Any]]:
    return _device
