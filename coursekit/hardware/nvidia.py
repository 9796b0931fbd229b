"""What the NVIDIA driver says, independently of any framework.

The driver is the ground truth for "is there a GPU here": if ``nvidia-smi`` lists a GPU and
torch says ``cuda.is_available() == False``, the framework is the problem (a CPU-only build, a
driver too old for its CUDA), not the machine. This module reads ``nvidia-smi`` and
``/proc/driver/nvidia``; it never imports a framework and never raises.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

# Fields asked of ``nvidia-smi --query-gpu``. Older drivers reject unknown fields for the whole
# query, so the optional ones are asked separately.
_BASIC_FIELDS = ("index", "name", "memory.total", "driver_version", "uuid", "pci.bus_id")
_OPTIONAL_FIELDS = ("compute_cap", "pcie.link.gen.max", "pcie.link.width.max")

# Usable bandwidth of one PCIe lane per direction, GB/s, after line encoding
# (8b/10b for gen 1-2, 128b/130b for gen 3-5; gen 6 uses FLIT mode at about 7.56 GB/s).
PCIE_LANE_GBPS = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}


def pcie_peak_gbps(gen: int | None, width: int | None) -> float | None:
    """Theoretical one-direction bandwidth of a PCIe link in GB/s, or ``None`` if unknown."""
    if not gen or not width or gen not in PCIE_LANE_GBPS:
        return None
    return round(PCIE_LANE_GBPS[gen] * width, 2)


def _run(args: list[str], timeout: float) -> tuple[int, str, str]:
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, "", f"{args[0]} did not answer within {timeout:.0f} s"
    except OSError as exc:
        return -1, "", str(exc)
    return out.returncode, out.stdout, out.stderr


def _int_or_none(value: str) -> int | None:
    value = value.strip()
    return int(value) if value.isdigit() else None


def parse_query_csv(text: str, fields: tuple[str, ...]) -> list[dict[str, str]]:
    """Rows of ``nvidia-smi --query-gpu=... --format=csv,noheader,nounits`` as dicts."""
    rows = []
    for line in text.strip().splitlines():
        values = [v.strip() for v in line.split(",")]
        if len(values) == len(fields):
            rows.append(dict(zip(fields, values)))
    return rows


def parse_cuda_driver_version(smi_text: str) -> str | None:
    """The highest CUDA version the driver supports, from plain ``nvidia-smi`` output."""
    match = re.search(r"CUDA Version:\s*([\d.]+)", smi_text)
    return match.group(1) if match else None


def parse_proc_version(text: str) -> str | None:
    """Driver version from ``/proc/driver/nvidia/version`` ("... Kernel Module  550.54.15 ...")."""
    match = re.search(r"Kernel Module(?: for \S+)?\s+([\d.]+)", text)
    return match.group(1) if match else None


def _device(row: dict[str, str], extra: dict[str, str]) -> dict[str, Any]:
    from .peaks import lookup_gpu

    mib = _int_or_none(row.get("memory.total", ""))
    memory = mib * 1024**2 if mib is not None else None
    gen = _int_or_none(extra.get("pcie.link.gen.max", ""))
    width = _int_or_none(extra.get("pcie.link.width.max", ""))
    cap = extra.get("compute_cap", "").strip()
    peak = lookup_gpu(row.get("name", ""), memory)
    return {
        "index": _int_or_none(row.get("index", "")) or 0,
        "name": row.get("name", ""),
        "uuid": row.get("uuid") or None,
        "pci_bus_id": row.get("pci.bus_id") or None,
        "memory_bytes": memory,
        "compute_capability": cap if re.fullmatch(r"\d+\.\d+", cap) else None,
        "pcie_link_gen": gen,
        "pcie_link_width": width,
        "pcie_peak_gbps": pcie_peak_gbps(gen, width),
        "known_peak": peak.name if peak else None,
    }


def driver_report(timeout: float = 15.0) -> dict[str, Any]:
    """The ``gpu`` section of the doctor's report: driver, CUDA driver version, GPUs."""
    report: dict[str, Any] = {
        "driver_present": False,
        "driver_version": None,
        "cuda_driver_version": None,
        "nvidia_smi": shutil.which("nvidia-smi"),
        "devices": [],
        "error": None,
    }
    proc = Path("/proc/driver/nvidia/version")
    try:
        if proc.exists():
            report["driver_present"] = True
            report["driver_version"] = parse_proc_version(proc.read_text(errors="replace"))
    except OSError:
        pass
    smi = report["nvidia_smi"]
    if not smi:
        return report
    code, out, err = _run([smi], timeout)
    if code != 0:
        report["error"] = (err or out).strip()[-500:] or f"nvidia-smi exited with {code}"
        return report
    report["driver_present"] = True
    report["cuda_driver_version"] = parse_cuda_driver_version(out)
    query = ["--format=csv,noheader,nounits"]
    code, out, err = _run([smi, f"--query-gpu={','.join(_BASIC_FIELDS)}", *query], timeout)
    if code != 0:
        report["error"] = (err or out).strip()[-500:]
        return report
    rows = parse_query_csv(out, _BASIC_FIELDS)
    extras: list[dict[str, str]] = [{} for _ in rows]
    code, out, _ = _run([smi, f"--query-gpu={','.join(_OPTIONAL_FIELDS)}", *query], timeout)
    if code == 0:
        parsed = parse_query_csv(out, _OPTIONAL_FIELDS)
        if len(parsed) == len(rows):
            extras = parsed
    else:  # an old driver: ask field by field, keep what it knows
        for name in _OPTIONAL_FIELDS:
            code, out, _ = _run([smi, f"--query-gpu={name}", *query], timeout)
            values = out.strip().splitlines() if code == 0 else []
            if len(values) == len(rows):
                for extra, value in zip(extras, values):
                    extra[name] = value.strip()
    report["devices"] = [_device(row, extra) for row, extra in zip(rows, extras)]
    if rows and not report["driver_version"]:
        report["driver_version"] = rows[0].get("driver_version") or None
    return report
