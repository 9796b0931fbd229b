"""The host machine: Python, operating system, CPU and RAM.

Everything here uses the standard library (``psutil`` only when it is installed), so it works
before any framework is importable and never raises: a fact that cannot be read is ``None``.
"""
from __future__ import annotations

import functools
import os
import platform
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# ISA extensions worth showing in the report and used by the CPU peak estimate (peaks.py).
# /proc/cpuinfo spells them like this on x86; on Arm the "Features" line uses asimd, sve, bf16...
_INTERESTING_ISA = (
    "sse4_2", "avx", "avx2", "fma", "f16c",
    "avx512f", "avx512_bf16", "avx512_fp16", "avx512_vnni", "amx_tile", "amx_bf16", "amx_fp16",
    "asimd", "asimdhp", "sve", "sve2", "bf16", "i8mm",
)


@dataclass(frozen=True)
class CpuInfo:
    """What the benchmarks and the peak estimate need to know about the CPU.

    Attributes:
        model: marketing name, e.g. ``"AMD EPYC 7B13"`` (``None`` if unknown).
        vendor: ``"GenuineIntel"``, ``"AuthenticAMD"``, ``"Apple"``, ``"ARM"``... or ``None``.
        architecture: ``platform.machine()``, e.g. ``"x86_64"`` or ``"aarch64"``.
        family: x86 CPU family number (AMD Zen 3/4 = 25, Zen 5 = 26), else ``None``.
        physical_cores: cores, not hardware threads (``None`` if unknown).
        logical_cores: hardware threads the OS has.
        usable_cores: logical CPUs this process may run on (affinity, containers).
        clock_ghz: the clock used for the peak estimate, and ``clock_source`` says where it came
            from (the maximum boost clock where the OS exposes it, else nominal or current).
        flags: ISA extensions, lower case, as the OS spells them.
        last_level_cache_bytes: size of the largest cache (L3 on most parts).
    """

    model: str | None = None
    vendor: str | None = None
    architecture: str = ""
    family: int | None = None
    physical_cores: int | None = None
    logical_cores: int | None = None
    usable_cores: int = 1
    clock_ghz: float | None = None
    clock_source: str | None = None
    flags: frozenset[str] = field(default_factory=frozenset)
    last_level_cache_bytes: int | None = None

    @property
    def compute_cores(self) -> int:
        """Cores a compute-bound benchmark should use: physical cores we are allowed to run on."""
        if self.physical_cores:
            return max(1, min(self.physical_cores, self.usable_cores))
        return max(1, self.usable_cores)

    def isa(self) -> list[str]:
        """The interesting ISA extensions present, in a stable order."""
        return [name for name in _INTERESTING_ISA if name in self.flags]

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "vendor": self.vendor,
            "architecture": self.architecture,
            "physical_cores": self.physical_cores,
            "logical_cores": self.logical_cores,
            "usable_cores": self.usable_cores,
            "clock_ghz": self.clock_ghz,
            "clock_source": self.clock_source,
            "isa": self.isa(),
            "last_level_cache_bytes": self.last_level_cache_bytes,
        }


def _read(path: str | Path) -> str | None:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return None


def _sysctl(name: str) -> str | None:
    """One ``sysctl -n`` value (macOS, BSD); ``None`` where there is no sysctl."""
    try:
        out = subprocess.run(["sysctl", "-n", name], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() or None


def parse_proc_cpuinfo(text: str) -> dict[str, Any]:
    """The fields of Linux ``/proc/cpuinfo`` that we use, from its text.

    Returns a dict with ``model``, ``vendor``, ``family``, ``flags`` (set), ``mhz`` and
    ``physical_cores`` (distinct (physical id, core id) pairs), each possibly missing.
    """
    info: dict[str, Any] = {}
    cores: set[tuple[str, str]] = set()
    physical_id = "0"
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip().lower(), value.strip()
        if key in ("model name", "cpu model") and "model" not in info:
            info["model"] = value
        elif key == "vendor_id" and "vendor" not in info:
            info["vendor"] = value
        elif key == "cpu family" and "family" not in info and value.isdigit():
            info["family"] = int(value)
        elif key in ("flags", "features") and "flags" not in info:
            info["flags"] = set(value.lower().split())
        elif key == "cpu mhz" and "mhz" not in info:
            try:
                info["mhz"] = float(value)
            except ValueError:
                pass
        elif key == "physical id":
            physical_id = value
        elif key == "core id":
            cores.add((physical_id, value))
        elif key == "cpu implementer" and "vendor" not in info:
            info["vendor"] = "ARM" if value.lower() == "0x41" else f"Arm implementer {value}"
    if cores:
        info["physical_cores"] = len(cores)
    return info


def _last_level_cache_bytes() -> int | None:
    best: tuple[int, int] | None = None  # (level, bytes)
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        level, size = _read(index / "level"), _read(index / "size")
        if not level or not size:
            continue
        match = re.fullmatch(r"(\d+)([KMG]?)", size.strip())
        if not match:
            continue
        scale = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[match.group(2)]
        candidate = (int(level), int(match.group(1)) * scale)
        if best is None or candidate > best:
            best = candidate
    if best is not None:
        return best[1]
    for name in ("hw.l3cachesize", "hw.l2cachesize"):  # macOS
        value = _sysctl(name)
        if value and value.isdigit() and int(value) > 0:
            return int(value)
    return None


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _clock(model: str | None, mhz: float | None) -> tuple[float | None, str | None]:
    """The clock for the peak estimate, in GHz, and where it came from."""
    max_khz = _read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    if max_khz and max_khz.strip().isdigit():
        return int(max_khz) / 1e6, "cpufreq maximum (boost) clock"
    if model:
        match = re.search(r"@\s*([\d.]+)\s*GHz", model)
        if match:
            return float(match.group(1)), "nominal clock in the model name"
    if mhz:
        return mhz / 1000, "/proc/cpuinfo 'cpu MHz' (current or nominal clock; boost may be higher)"
    hz = _sysctl("hw.cpufrequency_max")
    if hz and hz.isdigit():
        return int(hz) / 1e9, "sysctl hw.cpufrequency_max"
    return None, None


@functools.lru_cache(maxsize=1)
def cpu_info() -> CpuInfo:
    """Facts about this machine's CPU (cached: they do not change while we run)."""
    parsed: dict[str, Any] = {}
    text = _read("/proc/cpuinfo")
    if text:
        parsed = parse_proc_cpuinfo(text)
    model = parsed.get("model") or _sysctl("machdep.cpu.brand_string") or platform.processor() or None
    vendor = parsed.get("vendor")
    if vendor is None and model and model.startswith("Apple"):
        vendor = "Apple"
    physical = parsed.get("physical_cores")
    try:
        import psutil  # optional: better core counts on every OS

        physical = psutil.cpu_count(logical=False) or physical
    except Exception:  # noqa: BLE001 - psutil missing or unsupported here
        pass
    if physical is None:
        value = _sysctl("hw.physicalcpu")
        physical = int(value) if value and value.isdigit() else None
    clock, source = _clock(model, parsed.get("mhz"))
    flags = set(parsed.get("flags", ()))
    if not flags and sys.platform == "darwin":
        features = (_sysctl("machdep.cpu.features") or "") + " " + (_sysctl("machdep.cpu.leaf7_features") or "")
        flags = {f.lower().replace(".", "_") for f in features.split()}
    return CpuInfo(
        model=model,
        vendor=vendor,
        architecture=platform.machine(),
        family=parsed.get("family"),
        physical_cores=physical,
        logical_cores=os.cpu_count(),
        usable_cores=_usable_cores(),
        clock_ghz=round(clock, 3) if clock else None,
        clock_source=source,
        flags=frozenset(flags),
        last_level_cache_bytes=_last_level_cache_bytes(),
    )


def memory_info() -> dict[str, int | None]:
    """Total and available RAM in bytes (``None`` where the OS does not say)."""
    try:
        import psutil

        vm = psutil.virtual_memory()
        return {"total_bytes": int(vm.total), "available_bytes": int(vm.available)}
    except Exception:  # noqa: BLE001 - fall back to /proc/meminfo
        pass
    fields: dict[str, int] = {}
    for line in (_read("/proc/meminfo") or "").splitlines():
        key, _, value = line.partition(":")
        parts = value.split()
        if parts and parts[0].isdigit():
            fields[key] = int(parts[0]) * 1024
    return {"total_bytes": fields.get("MemTotal"), "available_bytes": fields.get("MemAvailable")}


def machine_report() -> dict[str, Any]:
    """The ``machine`` section of the doctor's report."""
    return {
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "executable": sys.executable,
        },
        "os": {
            "system": platform.system(),
            "release": platform.release(),
            "platform": platform.platform(),
        },
        "cpu": cpu_info().as_dict(),
        "memory": memory_info(),
    }
