"""One lab on one device, in this process: the solution notebook, its checks, and what differs.

``gpu_check.py`` starts this file once per lab, as a child process with a time budget::

    python3 tests/gpu/lab_run.py lab01_graphs --device cuda --baseline cpu --result r.json

Phases, each written to ``--result`` as soon as it ends (a child stopped at its budget still
leaves what it finished):

1. **requirements**: the modules the lab's code imports; a missing one (TensorFlow on the
   device machine) skips the lab with that reason.
2. **notebook**: every code cell of the solution, in order, in one namespace, with
   ``$COURSEKIT_DEVICE`` set to the device: the cells' ``pick_device()`` returns it, as in
   JupyterLab. An exception stops the notebook (nbval's rule: an error fails the notebook).
3. **checks**: every checks cell scored by the mutant suite's in-process harness, visible and
   hidden calls, the solution as the answer, with ``$COURSEKIT_DEVICE`` set to the device.
4. **baseline**: the same on the baseline device (the CPU), and **repeat**: the device again.
5. **differences**: each device run's observations judged against the baseline's with each
   case's own tolerances (``verdict.judge_expected``), and the two device runs compared bit
   for bit (non-determinism).
6. **precision**: torch's float32 matmul settings (TF32) as the lab left them, and what a
   float32 matmul and ``autocast`` really do on the device.

NOTE [what the checks put on the device]
    The check programs choose their own devices (``"cpu"`` and ``"meta"``); the device
    setting reaches the setup cell's ``device = pick_device()``, hence the notebook's demos
    and any answer that uses that global. So the notebook phase is where most GPU code runs,
    and the checks phase proves the grading path works in a CUDA process.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import importlib.util
import io
import json
import os
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
if str(REPO / "tests") not in sys.path:   # the test suite's tooling
    sys.path.insert(0, str(REPO / "tests"))

TAIL = 2000  # characters of a failing cell's output kept in the report


def _now() -> float:
    return time.perf_counter()


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` to ``path`` atomically (a reader never sees half a file)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, default=str, allow_nan=False))
    os.replace(tmp, path)


def _tail(text: str) -> str:
    return text if len(text) <= TAIL else "…" + text[-TAIL:]


# ---------------------------------------------------------------------------------------------
# 1. requirements
# ---------------------------------------------------------------------------------------------

def imported_modules(sources: list[str]) -> list[str]:
    """Top-level module names that ``import`` statements in ``sources`` name, in order."""
    names: dict[str, None] = {}
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update((a.name.split(".")[0], None) for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names[node.module.split(".")[0]] = None
    return list(names)


def missing_modules(sources: list[str]) -> list[str]:
    return [name for name in imported_modules(sources) if importlib.util.find_spec(name) is None]


# ---------------------------------------------------------------------------------------------
# 2. the notebook
# ---------------------------------------------------------------------------------------------

def _close_figures() -> None:
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


def run_notebook(notebook: Any, device: str, log: Any) -> dict[str, Any]:
    """Every code cell of ``notebook`` (a ``LabNotebook``) in order, on ``device``."""
    from coursekit.notebook.in_process_run import run_source

    os.environ["COURSEKIT_DEVICE"] = device
    namespace: dict[str, Any] = {"__name__": "__main__"}
    code = [c for c in notebook.cells if c.cell.cell_type == "code"]
    result: dict[str, Any] = {"device": device, "cells": len(code), "cells_run": 0, "seconds": 0.0,
                              "status": "ok", "error": None, "cell_seconds": []}
    start = _now()
    for cell in code:
        out = io.StringIO()
        began = _now()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), \
                    warnings.catch_warnings():
                warnings.simplefilter("ignore")
                run_source(cell.source, f"<cell {cell.index}>", namespace)
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # noqa: BLE001 — a failing cell (even sys.exit) is the outcome
            result["status"] = "error"
            result["error"] = {"cell": cell.index, "grade_id": cell.grade_id, "role": cell.role,
                               "exception": f"{type(error).__name__}: {error}",
                               "traceback": _tail(traceback.format_exc()),
                               "output": _tail(out.getvalue())}
        finally:
            _close_figures()
            seconds = _now() - began
            result["cell_seconds"].append([cell.index, round(seconds, 3)])
            print(f"--- cell {cell.index} ({cell.role}{' ' + cell.grade_id if cell.grade_id else ''}), "
                  f"{seconds:.2f} s\n{out.getvalue()}", file=log, flush=True)
        if result["error"]:
            break
        result["cells_run"] += 1
    result["device_seen"] = str(namespace.get("device", "")) or None
    result["seconds"] = round(_now() - start, 3)
    return result


# ---------------------------------------------------------------------------------------------
# 3. and 4. the checks, through the mutant suite's harness
# ---------------------------------------------------------------------------------------------

def solution_harness(lab_id: str) -> Any:
    """The mutant suite's ``Harness`` for ``lab_id``, without the student release.

    ``Harness.__init__`` builds the release (for ``stub()``) with nbgrader's preprocessors;
    the device machine has no nbgrader and solutions need no stubs, so this harness leaves
    it out. It also keeps each ``score`` call's drives (what was expected and observed).
    """
    from tooling.mutants import Harness
    from coursekit.course import load_course
    from coursekit.notebook import cells as lab_cells

    class SolutionHarness(Harness):
        def __init__(self, course: Any, lab: Any) -> None:
            course.enable_checks()
            self.course, self.lab, self.secret = course, lab, "gpu-check"
            self.source = lab_cells.load(course.source_notebook(lab))
            self.drives: list[Any] = []

        def drive(self, answer_id: str, code: str) -> tuple:
            checks, drives, delegated = super().drive(answer_id, code)
            self.drives = drives
            return checks, drives, delegated

    course = load_course(REPO)
    return SolutionHarness(course, course.lab(lab_id))


def score_checks(harness: Any, device: str) -> tuple[dict[str, Any], dict[tuple[str, bool], Any]]:
    """Score every checks cell with the solution on ``device``: the report's part, and the
    drives by ``(check, hidden)``."""
    from coursekit.notebook.cells import CHECKS

    os.environ["COURSEKIT_DEVICE"] = device
    start = _now()
    calls, drives = [], {}
    score = max_score = 0.0
    for cell in harness.source.with_role(CHECKS):
        covered = harness.source.covered_answers(cell)
        if not covered:
            continue
        answer = covered[0].grade_id
        began = _now()
        cell_score = harness.score(answer, harness.solution(answer))
        seconds = _now() - began
        score += cell_score.score or 0.0
        max_score += cell_score.max_score
        for drive in harness.drives:
            drives[(drive.check, drive.hidden)] = drive
        for check in cell_score.checks:
            calls.append({"cell": cell.grade_id, "check": check.check, "hidden": check.hidden,
                          "score": check.score, "max_score": check.max_score,
                          "cases_passed": check.cases_passed, "cases": check.cases,
                          "message": "" if check.passed else _tail(check.message),
                          "cell_seconds": round(seconds, 3)})
    return ({"device": device, "score": score, "max_score": max_score,
             "passed": max_score > 0 and score >= max_score - 1e-9,
             "seconds": round(_now() - start, 3), "calls": calls}, drives)


# ---------------------------------------------------------------------------------------------
# 5. differences
# ---------------------------------------------------------------------------------------------

def _bits(value: Any) -> str:
    from coursekit.grading.encoding import encode

    try:
        return json.dumps(encode(value), sort_keys=True, default=repr)
    except Exception:  # noqa: BLE001 — an unencodable value compares by its repr
        return repr(value)


def outside_tolerance(baseline: dict, other: dict) -> list[dict[str, Any]]:
    """Observations of ``other`` that the checks' own tolerances reject, taking the
    baseline's observations as the expected values."""
    from coursekit.grading.verdict import judge_expected

    found = []
    for key, base in baseline.items():
        run = other.get(key)
        if run is None:
            found.append({"check": key[0], "hidden": key[1], "label": "(whole call)",
                          "message": "not run on this device"})
            continue
        seen = dict(base.observed)
        expected = [(case, seen[case.label]) for case, _ in base.expected if case.label in seen]
        verdict = judge_expected(key[0], expected, run.observed, hidden=key[1])
        found += [{"check": key[0], "hidden": key[1], "label": c.label, "message": _tail(c.message)}
                  for c in verdict.cases if not c.passed]
    return found


def bitwise_differences(first: dict, second: dict) -> list[dict[str, Any]]:
    """Labels whose observed values differ bit for bit between two runs."""
    found = []
    for key, a in first.items():
        b = second.get(key)
        if b is None:
            continue
        other = {label: _bits(value) for label, value in b.observed}
        found += [{"check": key[0], "hidden": key[1], "label": label}
                  for label, value in a.observed if other.get(label) != _bits(value)]
    return found


# ---------------------------------------------------------------------------------------------
# 6. precision
# ---------------------------------------------------------------------------------------------

def matmul_settings() -> dict[str, Any]:
    """torch's float32 matmul and convolution settings, as they stand in this process.

    Each is read on its own: torch 2.9 added ``fp32_precision`` beside the older ``allow_tf32``
    flags, and a setting that cannot be read is reported as such, never raised.
    """
    import torch

    readers = {
        "float32_matmul_precision": torch.get_float32_matmul_precision,
        "cuda.matmul.allow_tf32": lambda: torch.backends.cuda.matmul.allow_tf32,
        "cudnn.allow_tf32": lambda: torch.backends.cudnn.allow_tf32,
        "cuda.matmul.fp32_precision": lambda: torch.backends.cuda.matmul.fp32_precision,
        "cudnn.fp32_precision": lambda: torch.backends.cudnn.fp32_precision,
        "cudnn.benchmark": lambda: torch.backends.cudnn.benchmark,
        "cudnn.deterministic": lambda: torch.backends.cudnn.deterministic,
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled,
        "default_dtype": lambda: str(torch.get_default_dtype()),
    }
    settings: dict[str, Any] = {}
    for name, read in readers.items():
        try:
            settings[name] = read()
        except Exception as error:  # noqa: BLE001 — older torch, or a setting it refuses to read
            settings[name] = f"unreadable: {type(error).__name__}: {error}"
    return settings


def precision_probe(device: str) -> dict[str, Any]:
    """What a float32 matmul and the default ``autocast`` do on ``device``.

    On the meta device only dtypes exist, so only they are reported.
    """
    import torch

    dev = torch.device(device)
    gen = torch.Generator().manual_seed(0)
    a64, b64 = (torch.randn(512, 512, generator=gen, dtype=torch.float64) for _ in range(2))
    a, b = a64.float().to(dev), b64.float().to(dev)
    probe: dict[str, Any] = {"device": device, "matmul_fp32_dtype": str((a @ b).dtype)}
    if dev.type != "meta":
        exact = a64 @ b64
        got = (a @ b).cpu().double()
        probe["matmul_fp32_rel_error"] = float((got - exact).abs().max() / exact.abs().max())
        # float32 rounding of a 512-term dot product stays near 1e-6; TF32's 10-bit mantissa
        # gives about 1e-3.
        probe["tf32_in_effect"] = probe["matmul_fp32_rel_error"] > 1e-4
    if dev.type in ("cpu", "cuda"):  # autocast's device types; meta has none
        probe["autocast_default_dtype"] = str(torch.get_autocast_dtype(dev.type))
        with torch.autocast(dev.type):
            probe["autocast_matmul_dtype"] = str((a @ b).dtype)
    return probe


# ---------------------------------------------------------------------------------------------
# the child's main
# ---------------------------------------------------------------------------------------------

def run(lab_id: str, device: str, baseline: str, result_path: Path, *, repeat: bool = True,
        notebook: bool = True, meta_probe: bool = False, log: Any = sys.stdout) -> dict[str, Any]:
    result: dict[str, Any] = {"lab": lab_id, "device": device, "baseline": baseline, "phases": []}
    started = _now()

    def phase(name: str, body: Any) -> Any:
        print(f"=== {lab_id}: {name}", file=log, flush=True)
        began = _now()
        try:
            value = body()
            status = "ok"
        except Exception as error:  # noqa: BLE001 — one phase's crash is reported, not fatal
            value, status = None, f"crashed: {type(error).__name__}: {error}"
            result.setdefault("crashes", {})[name] = _tail(traceback.format_exc())
            print(traceback.format_exc(), file=log, flush=True)
        result["phases"].append({"name": name, "status": status, "seconds": round(_now() - began, 3)})
        result["seconds"] = round(_now() - started, 3)
        write_json(result_path, result)
        return value

    from coursekit.course import load_course
    from coursekit.notebook import cells as lab_cells

    source = lab_cells.load(load_course(REPO).source_notebook(lab_id))
    code = [c.source for c in source.cells if c.cell.cell_type == "code"]
    missing = missing_modules(code)
    result["requirements"] = {"imports": imported_modules(code), "missing": missing}
    if missing:
        result["skipped"] = (f"the lab imports {', '.join(missing)}, which this Python does not "
                             f"have")
        write_json(result_path, result)
        return result
    result["settings_before"] = phase("settings", matmul_settings)
    if notebook:
        result["notebook"] = phase("notebook", lambda: run_notebook(source, device, log))
        result["settings_after_notebook"] = phase("settings", matmul_settings)
    harness = phase("harness", lambda: solution_harness(lab_id))
    if harness is None:
        return result
    runs: dict[str, dict] = {}

    def checks(name: str, on: str) -> dict[str, Any]:
        report, runs[name] = score_checks(harness, on)
        return report

    result["checks"] = phase("checks", lambda: checks("checks", device))
    result["baseline_checks"] = phase("baseline", lambda: checks("baseline", baseline))
    if repeat:
        result["repeat_checks"] = phase("repeat", lambda: checks("repeat", device))
    differences: dict[str, Any] = {}
    if "checks" in runs and "baseline" in runs:
        differences["outside_tolerance_vs_baseline"] = outside_tolerance(runs["baseline"], runs["checks"])
    if "checks" in runs and "repeat" in runs:
        differences["bitwise_between_runs"] = bitwise_differences(runs["checks"], runs["repeat"])
        differences["outside_tolerance_between_runs"] = outside_tolerance(runs["checks"], runs["repeat"])
    result["differences"] = differences
    result["settings_after_checks"] = phase("settings", matmul_settings)
    probes = [device] + (["meta"] if meta_probe else [])
    result["precision"] = phase("precision", lambda: [precision_probe(d) for d in probes])
    result["seconds"] = round(_now() - started, 3)
    result["done"] = True
    write_json(result_path, result)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lab")
    parser.add_argument("--device", required=True, help="the device under test: cuda, cpu")
    parser.add_argument("--baseline", default="cpu", help="the device to compare with (cpu)")
    parser.add_argument("--result", required=True, type=Path, help="where to write the JSON")
    parser.add_argument("--no-repeat", action="store_true", help="run the checks once on the device")
    parser.add_argument("--no-notebook", action="store_true", help="skip the notebook's own cells")
    parser.add_argument("--meta-probe", action="store_true",
                        help="also probe dtypes on torch's meta device (dry run)")
    args = parser.parse_args(argv)
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.pop("COURSEKIT_MODE", None)  # student mode: the notebook's grade() runs its check
    try:
        run(args.lab, args.device, args.baseline, args.result, repeat=not args.no_repeat,
            notebook=not args.no_notebook, meta_probe=args.meta_probe)
    except Exception as error:  # noqa: BLE001 — before the first phase: say why, for the report
        traceback.print_exc()
        partial = json.loads(args.result.read_text()) if args.result.exists() else {"phases": []}
        partial["error"] = f"{type(error).__name__}: {error}"
        write_json(args.result, partial)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
