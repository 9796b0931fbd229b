"""`coursekit doctor`: the JSON schema, exit codes, and the human-readable report.

One real run (``doctor_run``: ``coursekit doctor --bench --quick --json`` as a subprocess)
backs the schema and exit-code tests; the CLI's other paths run in-process on synthetic
environments so the suite does not import TensorFlow again.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
from typing import Any

import jsonschema
import pytest

from coursekit.hardware import doctor as doctor_module
from coursekit.hardware import environment, report, schema

from .conftest import REPO, gpu_machine
from machine_load import scaled


# --- the real run ----------------------------------------------------------------------------

def test_json_output_matches_the_schema(doctor_run) -> None:
    schema.validate(doctor_run.report)
    assert doctor_run.report["schema_version"] == schema.SCHEMA_VERSION == 1


def test_exit_code_is_the_one_the_report_states(doctor_run) -> None:
    assert doctor_run.returncode == doctor_run.report["exit_code"]
    assert doctor_run.returncode == (1 if doctor_run.report["status"] == "broken" else 0)


def test_this_machine_is_ready_for_the_course(doctor_run) -> None:
    errors = [f for f in doctor_run.report["findings"] if f["level"] == "error"]
    assert errors == [] and doctor_run.returncode == 0


def test_real_report_sees_every_framework_and_runs_the_tiny_op(doctor_run) -> None:
    frameworks = doctor_run.report["frameworks"]
    for name in ("numpy", "torch", "tensorflow", "jax"):
        assert frameworks[name]["status"] == "ok", frameworks[name]["reason"]
        assert any(d["kind"] == "cpu" and d["tiny_op"]["ok"] for d in frameworks[name]["devices"])
    assert doctor_run.report["blas"]["numpy"]["name"]
    assert doctor_run.report["packages"]["torch"]["version"].startswith(frameworks["torch"]["version"][:4])


def test_the_report_says_whether_the_grading_monitor_was_compiled(doctor_run, monkeypatch) -> None:
    assert doctor_run.report["grading"] == {"monitor_compiled": True}   # this install has it
    from coursekit.hardware.environment import grading_report
    monkeypatch.setitem(sys.modules, "coursekit.grading._fast_profile", None)   # as if no compiler
    assert grading_report() == {"monitor_compiled": False}


def test_json_mode_prints_only_json_on_stdout(doctor_run) -> None:
    assert doctor_run.stdout.lstrip().startswith("{") and doctor_run.stdout.rstrip().endswith("}")


def test_real_exit_code_is_one_when_frameworks_are_broken(tmp_path) -> None:
    # Fake torch / tensorflow / jax packages that fail on import shadow the real ones in every
    # child; the probes then fail in milliseconds, so this second real run is cheap.
    for name, body in [("torch", "raise ImportError('libtorch_cpu.so: cannot open shared object file')"),
                       ("tensorflow", "import os\nos.abort()"),
                       ("jax", "raise RuntimeError('jaxlib version 0.1 is older than the required 0.4')")]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(body + "\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(REPO)]))
    done = subprocess.run([sys.executable, "-m", "coursekit.cli", "doctor", "--json"], capture_output=True,
                          text=True, cwd=REPO, env=env, timeout=scaled(300))
    out = json.loads(done.stdout)
    schema.validate(out)
    assert done.returncode == 1 == out["exit_code"] and out["status"] == "broken"
    errors = {f["code"]: f["message"] for f in out["findings"] if f["level"] == "error"}
    assert {"broken:torch", "broken:tensorflow", "broken:jax"} <= set(errors)
    assert "libtorch_cpu.so" in errors["broken:torch"] and "SIGABRT" in errors["broken:tensorflow"]
    assert out["frameworks"]["numpy"]["status"] == "ok"


# --- the schema itself -----------------------------------------------------------------------

def test_schema_rejects_reports_that_break_it(doctor_run) -> None:
    good = doctor_run.report
    for path, value in [(("schema_version",), 2), (("status",), "fine"), (("exit_code",), "0"),
                        (("machine", "cpu", "usable_cores"), 0), (("findings",), [{"level": "fatal"}])]:
        bad = copy.deepcopy(good)
        target = bad
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        with pytest.raises(jsonschema.ValidationError):
            schema.validate(bad)
    missing = copy.deepcopy(good)
    del missing["frameworks"]["jax"]
    with pytest.raises(jsonschema.ValidationError):
        schema.validate(missing)


def test_synthetic_reports_used_by_the_rule_tests_match_the_schema(make_report) -> None:
    schema.validate(make_report())
    schema.validate(gpu_machine(make_report()))


def test_every_top_level_field_is_documented_in_the_module_docstring() -> None:
    documented = doctor_module.__doc__
    for key in schema.REPORT_SCHEMA["properties"]:
        assert f"``{key}``" in documented, f"{key} is not documented in doctor.py's docstring"


# --- the CLI in-process, on synthetic environments --------------------------------------------

def args(**kw: Any) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    doctor_module.doctor_arguments(parser)
    argv = []
    for key, value in kw.items():
        flag = "--" + key.replace("_", "-")
        argv += [flag] if value is True else [flag, str(value)]
    return parser.parse_args(argv)


@pytest.fixture
def fake_environment(monkeypatch, make_report):
    """Make ``collect_environment`` return a synthetic report's facts; returns the report to edit."""
    base = make_report()

    def collect(timeout: float = 0, frameworks: Any = None) -> dict[str, Any]:
        keys = ("machine", "env", "packages", "jupyter", "blas", "frameworks", "gpu", "grading")
        return {k: copy.deepcopy(base[k]) for k in keys}

    monkeypatch.setattr(environment, "collect_environment", collect)
    return base


def test_cli_flags() -> None:
    parsed = args(json=True, bench=True, quick=True, device="cpu,cuda:1", timeout=5)
    assert (parsed.json, parsed.bench, parsed.quick, parsed.device, parsed.timeout) == (True, True, True, "cpu,cuda:1", 5.0)


def test_exit_code_zero_with_only_warnings(fake_environment, capsys) -> None:
    fake_environment["packages"]["ipywidgets"]["version"] = None
    assert doctor_module.doctor(args(json=True)) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "warnings" and out["exit_code"] == 0
    schema.validate(out)


def test_exit_code_one_when_torch_is_missing(fake_environment, capsys) -> None:
    fake_environment["frameworks"]["torch"] = {"status": "missing", "version": None, "reason": "No module named 'torch'",
                                               "seconds": 0.1, "devices": [], "details": {}, "warnings": []}
    assert doctor_module.doctor(args(ascii=True)) == 1
    text = capsys.readouterr().out
    assert "torch is not installed" in text and "fix: pip install" in text
    assert "not ready: 1 problem to fix (exit code 1)" in text


def test_bench_is_skipped_with_a_reason_when_torch_is_broken(fake_environment, capsys) -> None:
    fake_environment["frameworks"]["torch"].update(status="broken", reason="ImportError: libc10.so", devices=[])
    assert doctor_module.doctor(args(json=True, quick=True)) == 1
    out = json.loads(capsys.readouterr().out)
    (result,) = out["bench"]["results"]
    assert result["value"] is None and "torch does not work" in result["skipped"]
    schema.validate(out)


def test_benchmarking_a_device_that_is_not_there_is_a_warning_not_a_crash(fake_environment, capsys) -> None:
    import torch

    if torch.cuda.device_count() > 7:
        pytest.skip("this machine has a cuda:7")
    assert doctor_module.doctor(args(json=True, quick=True, device="cuda:7")) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["bench"]["results"][0]["skipped"] == "device not available on this machine"
    assert any(f["code"].startswith("bench-failed") for f in out["findings"])


# --- the human-readable report ---------------------------------------------------------------

def test_human_report_has_aligned_sections_and_a_verdict(doctor_run) -> None:
    text = report.render(doctor_run.report, ascii_only=False)
    for section in ("Machine", "Packages", "JupyterLab extensions", "Frameworks and devices",
                    "GPU (from the NVIDIA driver)", "Benchmarks", "Findings"):
        assert f"\n{section}" in text
    assert "ready for the course" in text.splitlines()[-1]
    assert "✓" in text
    assert "(est.)" in text  # the CPU peak is labelled an estimate


def test_ascii_report_is_pure_ascii(doctor_run) -> None:
    text = report.render(doctor_run.report, ascii_only=True)
    assert text.isascii()


def test_each_warning_is_printed_with_its_fix(make_report) -> None:
    data = gpu_machine(make_report(), torch_sees_it=False)
    data["findings"] = [{"level": "warning", "code": "torch-cpu-build", "message": "CPU-only torch on a GPU machine",
                         "fix": "pip install torch --index-url https://download.pytorch.org/whl/cu126"},
                        {"level": "error", "code": "missing:torch", "message": "torch is missing", "fix": "pip install torch"}]
    data["exit_code"] = 1
    lines = report.render(data, ascii_only=False).splitlines()
    i = lines.index("  ! CPU-only torch on a GPU machine")
    assert lines[i + 1].strip() == "fix: pip install torch --index-url https://download.pytorch.org/whl/cu126"
    assert "  ✗ torch is missing" in lines
    assert "GPU 0" in "\n".join(lines) and "peak table: H100 SXM" in "\n".join(lines)


@pytest.mark.parametrize("value, unit, text", [(0.0312, "TFLOP/s", "31.2 GFLOP/s"), (790.4, "TFLOP/s", "790.4 TFLOP/s"),
                                               (8.4, "GB/s", "8.40 GB/s"), (3012.0, "GB/s", "3.01 TB/s")])
def test_rates_are_printed_in_readable_units(value: float, unit: str, text: str) -> None:
    assert report.format_rate(value, unit) == text


def test_a_measurement_above_an_estimated_peak_is_explained(doctor_run) -> None:
    data = copy.deepcopy(doctor_run.report)
    peaks = (data.get("bench") or {}).get("peaks") or {}
    if not (peaks.get("cpu") or {}).get("estimate"):
        pytest.skip("this machine has no estimated CPU peak")
    rated = [r for r in data["bench"]["results"] if r["device"] == "cpu" and r.get("fraction_of_peak")]
    assert rated, "the quick bench rates at least one CPU figure against the estimate"
    for r in rated:
        r["fraction_of_peak"] = 0.9
    assert "measured above the estimate" not in report.render(data, ascii_only=True)
    rated[0]["fraction_of_peak"] = 1.16
    assert "measured above the estimate" in report.render(data, ascii_only=True)
