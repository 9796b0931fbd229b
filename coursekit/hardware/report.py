"""The doctor's human-readable report, rendered from the same dict ``--json`` prints.

Rendering is a pure function of the report, so what a student reads and what a script reads
cannot disagree. Markers: ✓ fine, ✗ broken (the doctor exits non-zero), ! warning, · remark.
Terminals that cannot print them get ASCII instead.
"""
from __future__ import annotations

import sys
from typing import Any, Iterable

_UNICODE = {"ok": "✓", "error": "✗", "warning": "!", "info": "·", "bar": "█", "empty": "░", "dash": "—",
            "times": "×", "sep": "·"}
_ASCII = {"ok": "+", "error": "x", "warning": "!", "info": "-", "bar": "#", "empty": ".", "dash": "-",
          "times": "x", "sep": "|"}


def can_encode(stream: Any = None) -> bool:
    """Whether ``stream`` (default stdout) can print the report's symbols."""
    encoding = getattr(stream or sys.stdout, "encoding", None) or "ascii"
    try:
        "".join(_UNICODE.values()).encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _gib(n: int | None) -> str:
    return f"{n / 1024**3:.1f} GiB" if n else "?"


def format_rate(value: float | None, unit: str) -> str:
    """``0.0312 TFLOP/s`` -> ``"31.2 GFLOP/s"``; ``8.4 GB/s`` -> ``"8.40 GB/s"``."""
    if value is None:
        return "?"
    if unit == "TFLOP/s":
        return f"{value:.1f} TFLOP/s" if value >= 1 else f"{value * 1000:.1f} GFLOP/s"
    return f"{value / 1000:.2f} TB/s" if value >= 1000 else f"{value:.2f} GB/s"


def _size(result: dict[str, Any]) -> str:
    if result.get("kind") == "matmul":
        return f"n={result.get('size')}"
    size = result.get("size") or 0
    return f"{size / 1024**2:.0f} MiB" if size >= 1024**2 else f"{size} B"


class _Writer:
    def __init__(self, symbols: dict[str, str]) -> None:
        self.s = symbols
        self.lines: list[str] = []

    def section(self, title: str) -> None:
        if self.lines:
            self.lines.append("")
        self.lines.append(title)

    def line(self, text: str = "", indent: int = 2) -> None:
        self.lines.append(" " * indent + text if text else "")

    def rows(self, rows: Iterable[list[str]], indent: int = 2) -> None:
        """Aligned columns (the last column is not padded)."""
        rows = [r for r in rows]
        if not rows:
            return
        widths = [max(len(r[i]) for r in rows if len(r) > i) for i in range(max(len(r) for r in rows))]
        for r in rows:
            cells = [c.ljust(widths[i]) if i < len(r) - 1 else c for i, c in enumerate(r)]
            self.lines.append(" " * indent + "  ".join(cells).rstrip())


def _machine(w: _Writer, machine: dict[str, Any]) -> None:
    w.section("Machine")
    py, osinfo, cpu, mem = (machine.get(k, {}) for k in ("python", "os", "cpu", "memory"))
    cores = f"{cpu.get('physical_cores') or '?'} cores"
    if cpu.get("logical_cores") and cpu.get("logical_cores") != cpu.get("physical_cores"):
        cores += f" / {cpu.get('logical_cores')} threads"
    if cpu.get("usable_cores") and cpu.get("usable_cores") != cpu.get("logical_cores"):
        cores += f" ({cpu.get('usable_cores')} usable)"
    clock = f"{cpu['clock_ghz']:.2f} GHz" if cpu.get("clock_ghz") else "clock unknown"
    isa = " ".join(x.upper() for x in cpu.get("isa", [])) or "no vector extensions detected"
    sep = f" {w.s['sep']} "
    w.rows([
        ["Python", f"{py.get('version')} ({py.get('implementation')})  {py.get('executable')}"],
        ["OS", f"{osinfo.get('system')} {osinfo.get('release')}"],
        ["CPU", sep.join([cpu.get("model") or "unknown model", cpu.get("architecture") or "?", cores, clock])],
        ["ISA", isa],
        ["RAM", f"{_gib(mem.get('total_bytes'))} ({_gib(mem.get('available_bytes'))} available)"],
    ])


def _blas_text(blas: dict[str, Any] | None) -> str:
    if not blas:
        return ""
    parts = [str(blas.get("name") or "unknown BLAS")]
    if blas.get("version"):
        parts[0] += f" {blas['version']}"
    extra = [str(blas[k]) for k in ("architecture", "cpu_capability") if blas.get(k)]
    if blas.get("threads"):
        extra.append(f"{blas['threads']} threads")
    return "BLAS: " + parts[0] + (f" ({', '.join(extra)})" if extra else "")


def _packages(w: _Writer, report: dict[str, Any]) -> None:
    w.section("Packages")
    rows = []
    for name, info in report.get("packages", {}).items():
        version = info.get("version")
        if version:
            mark = w.s["ok"]
            note = _blas_text(report.get("blas", {}).get(name)) if name in ("numpy", "torch") else ""
            if info.get("distribution") and info["distribution"] != name:
                note = f"(as {info['distribution']})"
        else:
            mark = w.s["error"] if info.get("required") else w.s["warning"]
            version = "not installed"
            note = "" if info.get("required") else "(optional)"
        rows.append([mark, name, version, note])
    w.rows(rows)


def _jupyter(w: _Writer, report: dict[str, Any]) -> None:
    jupyter = report.get("jupyter", {})
    if not jupyter:
        return
    w.section("JupyterLab extensions")
    rows = []
    for name, state in jupyter.get("labextensions", {}).items():
        if state.get("installed") and state.get("enabled"):
            rows.append([w.s["ok"], name, "installed, enabled"])
        elif state.get("installed"):
            rows.append([w.s["warning"], name, "installed, disabled"])
        else:
            rows.append([w.s["warning"], name, "not installed"])
    server = jupyter.get("server_extensions", {})
    if server:
        on = [k for k, v in server.items() if v]
        off = [k for k, v in server.items() if not v]
        rows.append([w.s["ok"] if not off else w.s["warning"], "nbgrader server extensions",
                     ", ".join(on) + (f"; disabled: {', '.join(off)}" if off else "")])
    w.rows(rows)


def _frameworks(w: _Writer, report: dict[str, Any]) -> None:
    w.section("Frameworks and devices (a tiny matmul on each device)")
    rows = [["", "framework", "version", "probe", "devices", "build"]]
    for name, probe in report.get("frameworks", {}).items():
        status = probe.get("status")
        seconds = f"{probe.get('seconds', 0):.1f} s"
        if status != "ok":
            mark = w.s["error"]
            rows.append([mark, name, status or "?", seconds, w.s["dash"], (probe.get("reason") or "")[:100]])
            continue
        devices = []
        bad = False
        for d in probe.get("devices", []):
            ok = d.get("tiny_op", {}).get("ok")
            bad |= not ok
            label = d.get("name", "?")
            if d.get("kind") == "gpu" and d.get("description"):
                label += f" ({d['description']})"
            devices.append(f"{label} {w.s['ok'] if ok else w.s['error']}")
        details = probe.get("details", {})
        extra = ""
        if name == "torch":
            extra = f"CUDA build: {details.get('cuda_build') or 'none'}"
            if details.get("cudnn_version"):
                extra += f", cuDNN {details['cudnn_version']}"
        elif name == "tensorflow":
            extra = f"built with CUDA: {'yes' if details.get('built_with_cuda') else 'no'}"
        elif name == "jax":
            extra = f"backend: {details.get('default_backend')}"
        rows.append([w.s["error"] if bad or not devices else w.s["ok"], name, probe.get("version") or "?",
                     seconds, ", ".join(devices) or "no devices", extra])
    w.rows(rows)


def _gpu(w: _Writer, report: dict[str, Any]) -> None:
    gpu = report.get("gpu", {})
    w.section("GPU (from the NVIDIA driver)")
    if not gpu.get("driver_present") and not gpu.get("devices"):
        w.line(f"{w.s['info']} no NVIDIA driver (no nvidia-smi, no /proc/driver/nvidia)"
               + (f": {gpu['error']}" if gpu.get("error") else ""))
        return
    w.line(f"{w.s['ok']} driver {gpu.get('driver_version') or '?'}, supports CUDA up to "
           f"{gpu.get('cuda_driver_version') or '?'}")
    if gpu.get("error"):
        w.line(f"{w.s['warning']} nvidia-smi: {gpu['error']}")
    rows = []
    for d in gpu.get("devices", []):
        link = f"PCIe {d['pcie_link_gen']}.0 x{d['pcie_link_width']}" if d.get("pcie_link_gen") else "PCIe ?"
        rows.append([w.s["ok"], f"GPU {d.get('index')}", d.get("name", "?"), _gib(d.get("memory_bytes")),
                     f"compute {d.get('compute_capability') or '?'}", link,
                     f"peak table: {d.get('known_peak') or 'not listed'}"])
    w.rows(rows)


def _bar(fraction: float | None, symbols: dict[str, str], width: int = 10) -> str:
    if fraction is None:
        return ""
    filled = max(0, min(width, round(fraction * width)))
    return symbols["bar"] * filled + symbols["empty"] * (width - filled)


def _bench(w: _Writer, report: dict[str, Any]) -> None:
    bench = report.get("bench")
    if not bench:
        return
    w.section(f"Benchmarks (torch{', quick' if bench.get('quick') else ''}; measured vs the device's peak)")
    rows = [["device", "test", "size", "measured", "peak", "of peak", ""]]
    skipped = []
    for r in bench.get("results", []):
        test = r["kind"] + (f" {r['dtype']}" if r.get("dtype") else "") + (f" {r['variant']}" if r.get("variant") else "")
        if r.get("value") is None:
            skipped.append(f"{r['device']} {test}: {r.get('skipped')}")
            continue
        peak = format_rate(r.get("peak"), r["unit"]) + (" (est.)" if r.get("peak_is_estimate") else "") \
            if r.get("peak") else "unknown"
        fraction = r.get("fraction_of_peak")
        rows.append([r["device"], test, _size(r), format_rate(r["value"], r["unit"]), peak,
                     f"{100 * fraction:.0f} %" if fraction is not None else w.s["dash"],
                     _bar(fraction, w.s)])
    w.rows(rows)
    for device, peak in (bench.get("peaks") or {}).items():
        if peak and peak.get("estimate"):
            w.line(f"est. ({device}) = {peak.get('source')}", indent=2)
            above = [r for r in bench.get("results", []) if r["device"] == device
                     and (r.get("fraction_of_peak") or 0) > 1]
            if above:
                # An estimate below a measurement is the estimate's fault (a boost clock the
                # OS does not expose), not a faster-than-possible machine.
                w.line("measured above the estimate: this CPU runs faster than the clock the "
                       "estimate could read, so read those fractions as 'at the peak'", indent=2)
        elif peak:
            w.line(f"{device} peak: {peak.get('name')}, {peak.get('source')}", indent=2)
        else:
            w.line(f"{device}: not in the table of known peaks; fractions are not shown", indent=2)
    if skipped:
        w.line("not measured:")
        for text in skipped:
            w.line(f"{w.s['info']} {text}", indent=4)


def _findings(w: _Writer, report: dict[str, Any]) -> None:
    findings = report.get("findings", [])
    w.section("Findings")
    if not findings:
        w.line(f"{w.s['ok']} nothing to fix")
        return
    for f in findings:
        w.line(f"{w.s.get(f.get('level'), '?')} {f.get('message')}")
        if f.get("fix"):
            w.line(f"fix: {f['fix']}", indent=6)


def _verdict(report: dict[str, Any], s: dict[str, str]) -> str:
    findings = report.get("findings", [])
    errors = sum(f.get("level") == "error" for f in findings)
    warnings = sum(f.get("level") == "warning" for f in findings)
    if errors:
        return (f"{s['error']} not ready: {errors} problem{'s' if errors != 1 else ''} to fix "
                f"(exit code {report.get('exit_code', 1)})")
    if warnings:
        return f"{s['ok']} ready for the course, with {warnings} warning{'s' if warnings != 1 else ''}"
    return f"{s['ok']} ready for the course"


def render(report: dict[str, Any], *, ascii_only: bool | None = None) -> str:
    """The report as text for a terminal or a notebook cell.

    Args:
        report: the dict built by ``doctor.build_report`` (or read back from ``--json``).
        ascii_only: use ASCII markers; default: only if stdout cannot print the symbols.
    """
    symbols = _ASCII if (ascii_only if ascii_only is not None else not can_encode()) else _UNICODE
    w = _Writer(symbols)
    w.lines.append(f"coursekit doctor {symbols['sep']} is this machine ready for Deep Learning Software?")
    w.line("")
    _machine(w, report.get("machine", {}))
    _packages(w, report)
    _jupyter(w, report)
    _frameworks(w, report)
    _gpu(w, report)
    _bench(w, report)
    _findings(w, report)
    w.section(_verdict(report, symbols))
    return "\n".join(w.lines).replace("\n\n\n", "\n\n") + "\n"
