"""The GPU check's short table: what ran where, against what peak, and what differed from the CPU.

:func:`render` turns the JSON report (``gpu_check.py``) into Markdown that reads in a terminal.
It never raises on a partial report: a run stopped half-way still gets its table.
"""
from __future__ import annotations

from typing import Any

MAX_LISTED = 8  # differences listed per lab; the JSON has them all

DRY_RUN_BANNER = """\
======================================================================================
 DRY RUN: {why}.
 The labs run on {device}, the dtype probe on {probes}, the doctor with --bench --quick.
 NOTHING IN THIS REPORT WAS MEASURED ON A GPU.
======================================================================================"""


def banner(report: dict[str, Any]) -> str:
    if report.get("mode") != "dry-run":
        return ""
    return DRY_RUN_BANNER.format(why=report.get("dry_run_reason", "no CUDA device"),
                                 device=report.get("target_device", "cpu"),
                                 probes=", ".join(report.get("probe_devices", ["cpu"])))


def _fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _sig(value: Any) -> str:
    """Three significant digits: 0.0213 TFLOP/s on a CPU, 798 on an H100."""
    return "–" if value is None else f"{value:.3g}"


def _figure_rows(doctor: dict[str, Any]) -> list[str]:
    rows = ["| device | measure | dtype | size | measured | known peak | share of peak |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for f in doctor.get("figures", []):
        what = f["kind"] + (f" {f['variant']}" if f.get("variant") else "")
        size = f.get("size")
        size_text = (f"{size}²" if f["kind"] == "matmul" else f"{size / 2**20:.0f} MiB") if size else "–"
        if f.get("value") is None:
            rows.append(f"| {f['device']} | {what} | {f.get('dtype') or ''} | {size_text} | "
                        f"skipped: {f.get('skipped') or '?'} | | |")
            continue
        peak = (f"{_sig(f.get('peak'))} {f['unit']} ({f.get('peak_name')}"
                f"{', estimate' if f.get('peak_is_estimate') else ''})") if f.get("peak") else "unknown"
        share = f"{100 * f['fraction_of_peak']:.0f} %" if f.get("fraction_of_peak") is not None else "–"
        rows.append(f"| {f['device']} | {what} | {f.get('dtype') or ''} | {size_text} | "
                    f"{_sig(f['value'])} {f['unit']} | {peak} | {share} |")
    return rows


def _checks_text(checks: dict[str, Any] | None) -> str:
    if not checks:
        return "not run"
    visible = [c for c in checks["calls"] if not c["hidden"]]
    hidden = [c for c in checks["calls"] if c["hidden"]]
    ok = lambda calls: sum(c["cases_passed"] == c["cases"] and c["cases"] > 0 for c in calls)
    return (f"{_fmt(checks['score'], 0)}/{_fmt(checks['max_score'], 0)} pts; "
            f"visible {ok(visible)}/{len(visible)}, hidden {ok(hidden)}/{len(hidden)}")


def _notebook_text(notebook: dict[str, Any] | None) -> str:
    if not notebook:
        return "not run"
    text = f"{notebook['cells_run']}/{notebook['cells']} cells, {notebook['seconds']:.0f} s"
    if notebook.get("error"):
        text += f", cell {notebook['error']['cell']} raised"
    return text


def _tf32_text(lab: dict[str, Any]) -> str:
    probes = [p for p in lab.get("precision") or [] if "tf32_in_effect" in p]
    settings = lab.get("settings_after_checks") or lab.get("settings_after_notebook") or {}
    said = settings.get("cuda.matmul.allow_tf32")
    measured = any(p["tf32_in_effect"] for p in probes) if probes else None
    if measured is None and said is None:
        return "–"
    return f"{'on' if said else 'off'} / {'on' if measured else 'off' if measured is False else '?'}"


def _lab_rows(labs: dict[str, Any]) -> list[str]:
    rows = [("| lab | status | notebook on device | checks on device | vs CPU: outside tolerance | "
             "repeat: bitwise / outside tolerance | TF32 set / measured | time | reason |"),
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for lab_id, lab in labs.items():
        diff = lab.get("differences") or {}
        vs_cpu = diff.get("outside_tolerance_vs_baseline")
        bitwise = diff.get("bitwise_between_runs")
        repeat_tol = diff.get("outside_tolerance_between_runs")
        rows.append(
            f"| {lab_id} | **{lab.get('status', '?')}** | {_notebook_text(lab.get('notebook'))} | "
            f"{_checks_text(lab.get('checks'))} | {_fmt(None if vs_cpu is None else len(vs_cpu))} | "
            f"{_fmt(None if bitwise is None else len(bitwise))} / "
            f"{_fmt(None if repeat_tol is None else len(repeat_tol))} | {_tf32_text(lab)} | "
            f"{_fmt(lab.get('seconds'), 0)} s of {_fmt(lab.get('budget_s'), 0)} s | "
            f"{(lab.get('reason') or '').replace('|', '/')} |")
    return rows


def _details(labs: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for lab_id, lab in labs.items():
        diff = lab.get("differences") or {}
        for key, title in (("outside_tolerance_vs_baseline", "outside the checks' tolerances vs the CPU"),
                           ("outside_tolerance_between_runs", "outside tolerance between two device runs"),
                           ("bitwise_between_runs", "not bit-identical between two device runs")):
            items = diff.get(key) or []
            if items:
                lines.append(f"* {lab_id}, {len(items)} {title}:")
                lines += [(f"    * {d['check']} ({'hidden' if d['hidden'] else 'visible'}): {d['label']}"
                           + (f" — {d['message'].splitlines()[0]}" if d.get("message") else ""))
                          for d in items[:MAX_LISTED]]
                if len(items) > MAX_LISTED:
                    lines.append(f"    * … {len(items) - MAX_LISTED} more in the JSON report")
        notebook = lab.get("notebook") or {}
        if notebook.get("error"):
            lines.append(f"* {lab_id}, notebook cell {notebook['error']['cell']}: "
                         f"{notebook['error']['exception'].splitlines()[0]}")
        for call in (lab.get("checks") or {}).get("calls", []):
            if call["message"]:
                lines.append(f"* {lab_id}, {call['check']} ({'hidden' if call['hidden'] else 'visible'}): "
                             f"{call['cases_passed']}/{call['cases']} cases; {call['message'].splitlines()[0]}")
        settings = lab.get("settings_after_checks") or {}
        for probe in lab.get("precision") or []:
            if probe.get("autocast_default_dtype"):
                conv = (f"; cuDNN convolutions may use TF32 (cudnn.allow_tf32="
                        f"{settings.get('cudnn.allow_tf32')})" if probe["device"].startswith("cuda") else "")
                lines.append(f"* {lab_id}, on {probe['device']}: float32 matmul relative error "
                             f"{probe.get('matmul_fp32_rel_error', 0):.1e}; autocast's default dtype "
                             f"{probe['autocast_default_dtype'].replace('torch.', '')}{conv}")
        before, after = lab.get("settings_before") or {}, lab.get("settings_after_checks") or {}
        changed = {k: (before[k], after[k]) for k in before if k in after and before[k] != after[k]}
        if changed:
            lines.append(f"* {lab_id} changed torch's settings: "
                         + ", ".join(f"{k} {a} -> {b}" for k, (a, b) in changed.items()))
    return lines


def render(report: dict[str, Any]) -> str:
    """The report as Markdown: header, doctor's figures, one row per lab, then the details."""
    env = report.get("environment") or {}
    setup = report.get("setup") or {}
    lines = [f"# coursekit GPU check — {report.get('mode', '?')} on {report.get('target_device', '?')}", ""]
    if banner(report):
        lines += ["```", banner(report), "```", ""]
    state = ("complete" if report.get("complete") else
             f"STOPPED ({report['stopped']})" if report.get("stopped") else "incomplete")
    known = f" (known peak: {env['known_peak']})" if env.get("known_peak") else ""
    lines += [(f"* run: {report.get('started', '?')}, {_fmt(report.get('seconds'), 0)} s of a "
               f"{_fmt(report.get('budget_s'), 0)} s budget, {state}"),
              (f"* machine: {env.get('device_name') or 'no GPU'}{known}; Python {env.get('python', '?')}, "
               f"torch {env.get('torch', '?')}, CUDA {env.get('cuda') or '–'}"),
              f"* setup: {_fmt(setup.get('seconds'), 1)} s — {setup.get('detail', '?')}"]
    settings = env.get("matmul_settings") or {}
    if settings:
        lines.append("* torch's float32 settings at start: " + ", ".join(
            f"{k}={v}" for k, v in settings.items() if "tf32" in k or "precision" in k))
    doctor = report.get("doctor")
    lines += ["", "## doctor --bench against the known peaks", ""]
    if not doctor:
        lines.append("not run")
    else:
        lines.append(f"`{doctor.get('command', '')}`: {doctor.get('status', '?')}, "
                     f"{_fmt(doctor.get('seconds'), 0)} s"
                     + (f" — {doctor['error']}" if doctor.get("error") else ""))
        if doctor.get("figures"):
            lines += [""] + _figure_rows(doctor)
        errors = [f for f in doctor.get("findings", []) if f.get("level") == "error"]
        if errors:
            lines += ["", "doctor's errors: " + "; ".join(f"{f['code']}" for f in errors)]
    labs = report.get("labs") or {}
    lines += ["", "## labs whose text says they run unchanged on a GPU", ""]
    lines += _lab_rows(labs) if labs else ["none run"]
    details = _details(labs)
    if details:
        lines += ["", "## details: what failed, what differed, what the device does", ""] + details
    if banner(report):
        lines += ["", "```", banner(report), "```"]
    return "\n".join(lines) + "\n"
