"""The GPU check (``make gpu-check``) works before a GPU is ever lent.

A GPU machine comes rarely and for minutes, so the script must not meet its first bug there.
These tests run it as a dry run, end to end, on the device machine's packages only (a venv
without site-packages, on a folder of links to this venv's distributions that the device has
or gets carried: ``device_env.simulated_site``), stop it with SIGTERM half-way, and run it out
of time; and they keep the list of GPU labs in step with what the labs' text claims.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import venv
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import device_env
import gpu_check
import gpu_report

REPO = gpu_check.REPO
# The cheapest lab for the end-to-end run (its notebook has no benchmark loop or profiler).
CHEAP_LAB = "lab00_setup"


# -- the list of GPU labs ----------------------------------------------------------------------

def test_labs_on_gpu_are_exactly_the_labs_whose_text_says_they_run_unchanged():
    claiming = set(gpu_check.labs_claiming_gpu())
    listed = set(gpu_check.LABS_ON_GPU)
    assert claiming == listed, (
        f"labs whose text says their code runs unchanged but LABS_ON_GPU misses: "
        f"{sorted(claiming - listed)}; listed in LABS_ON_GPU but their text no longer says so: "
        f"{sorted(listed - claiming)} (tests/gpu/gpu_check.py)")


def _course(root: Path, texts: dict[str, str]) -> Path:
    (root / "course").mkdir(parents=True)
    (root / "course" / "course.toml").write_text(
        "".join(f'[[lab]]\nid = "{lab}"\ntitle = "t"\npoints = 1\n\n' for lab in texts))
    for lab, text in texts.items():
        (root / "solutions" / lab).mkdir(parents=True)
        cells = [{"cell_type": "markdown", "metadata": {}, "source": text.splitlines(True)},
                 {"cell_type": "code", "metadata": {}, "source": ["# runs unchanged on a GPU\n"],
                  "outputs": [], "execution_count": None}]
        (root / "solutions" / lab / f"{lab}.ipynb").write_text(json.dumps({"cells": cells}))
    return root


def test_a_claim_is_read_from_the_text_across_line_breaks_and_not_from_code(tmp_path):
    root = _course(tmp_path, {
        "a": "The same code runs\nunchanged on a GPU.",
        "b": "Leave the arrays passed in unchanged; the loop runs on any device.",
        "c": "Write it with `device` and it runs unchanged everywhere.",
    })
    assert gpu_check.labs_claiming_gpu(root) == ["a", "c"]


# -- what travels to the device ----------------------------------------------------------------

def test_carried_packages_are_exactly_pinnable_and_not_already_on_the_device():
    for name in device_env.CARRIED:
        assert device_env.normalise(name) not in device_env.DEVICE_IMAGE, f"{name} is in the image"
        assert device_env.metadata.version(name), f"{name} has no version here to pin"
    assert "nbgrader" not in device_env.CARRIED  # see device_env's NOTE


# -- the report's table ------------------------------------------------------------------------

def test_the_table_renders_a_report_stopped_before_anything_ran():
    partial = {"mode": "dry-run", "target_device": "cpu", "stopped": "SIGTERM during setup",
               "labs": {"lab01_graphs": {"status": "stopped"}}}
    text = gpu_report.render(partial)
    assert "STOPPED (SIGTERM during setup)" in text and "NOTHING IN THIS REPORT" in text
    assert "| lab01_graphs | **stopped** |" in text


def test_the_table_lists_what_differed_and_what_failed():
    lab = {"status": "failed", "notebook": {"cells": 5, "cells_run": 2, "seconds": 3.0,
                                            "error": {"cell": 7, "exception": "RuntimeError: CUDA error"}},
           "checks": {"score": 1.0, "max_score": 2.0, "passed": False, "calls": [
               {"check": "lab09.predict", "hidden": True, "cases_passed": 4, "cases": 5,
                "message": "logits differ at (0, 1)"}]},
           "differences": {"outside_tolerance_vs_baseline": [
               {"check": "lab09.predict", "hidden": False, "label": "logits", "message": "got 1.001"}],
               "bitwise_between_runs": [{"check": "lab09.predict", "hidden": False, "label": "logits"}]}}
    text = gpu_report.render({"mode": "gpu", "target_device": "cuda", "labs": {"lab09_performance": lab}})
    assert "NOTHING IN THIS REPORT" not in text
    assert "| lab09_performance | **failed** | 2/5 cells, 3 s, cell 7 raised | 1/2 pts; visible 0/0, hidden 0/1 | 1 | 1 / – |" in text
    assert "lab09.predict (visible): logits — got 1.001" in text
    assert "notebook cell 7: RuntimeError: CUDA error" in text


@pytest.mark.parametrize(("entry", "code", "verdict"), [
    ({"skipped": "the lab imports tensorflow, which this Python does not have"}, 0, "skipped"),
    ({"phases": [{"name": "notebook", "status": "ok"}]}, None, "timeout"),
    ({"phases": [{"name": "precision", "status": "ok"}], "done": True,
      "checks": {"passed": True}}, None, "failed"),   # done, but still there at the budget
    ({"phases": [{"name": "checks", "status": "ok"}], "done": True, "checks": {"passed": True}}, 0, "passed"),
    ({"phases": [{"name": "checks", "status": "ok"}], "checks": {"passed": True}}, -9, "failed"),
    ({"phases": [{"name": "harness", "status": "crashed: ImportError"}], "done": True}, 0, "failed"),
    ({"phases": [{"name": "precision", "status": "crashed: AttributeError"}], "done": True,
      "checks": {"passed": True}}, 0, "passed"),   # an informative phase: said, not failed
    ({"phases": [], "error": "ModuleNotFoundError: No module named 'nbformat'"}, 1, "failed"),
])
def test_a_lab_passes_only_when_every_phase_ran_and_its_checks_passed(entry, code, verdict):
    assert gpu_check.GpuCheck._lab_verdict(entry, code, 150.0)[0] == verdict


# -- the script, run --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def device_python(tmp_path_factory) -> tuple[str, dict[str, str]]:
    """A Python that sees only the device image's packages and the carried ones."""
    root = tmp_path_factory.mktemp("device")
    site = device_env.simulated_site(root / "site")
    venv.create(root / "venv", with_pip=False, system_site_packages=False)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "COURSEKIT_DEVICE")}
    env.update(PYTHONPATH=f"{site}{os.pathsep}{REPO}", OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    return str(root / "venv" / "bin" / "python"), env


def _report(out: Path) -> dict:
    return json.loads((out / "gpu_check.json").read_text())


@pytest.mark.slow
def test_dry_run_end_to_end_on_the_device_packages_only(device_python, tmp_path):
    python, env = device_python
    out = tmp_path / "out"
    began = time.monotonic()
    done = subprocess.run([python, str(HERE / "gpu_check.py"), "--out", str(out), "--labs", CHEAP_LAB,
                           "--lab-budget", "400", "--budget", "500"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False)
    seconds = time.monotonic() - began
    assert done.stdout.count("NOTHING IN THIS REPORT WAS MEASURED ON A GPU") >= 2, done.stdout[-3000:]
    report = _report(out)
    assert report["mode"] == "dry-run" and report["complete"] and report["stopped"] is None
    assert report["setup"]["missing_before"] == [], "the simulated device lacks a carried package"
    assert [s["name"] for s in report["steps"]] == ["setup", "doctor", CHEAP_LAB]
    assert all(s["status"] == "ok" for s in report["steps"]), report["steps"]
    doctor = report["doctor"]
    assert doctor["status"] in ("ok", "warnings", "broken") and doctor["figures"], doctor.get("error")
    assert any(f["kind"] == "matmul" and f["value"] for f in doctor["figures"])
    lab = report["labs"][CHEAP_LAB]
    assert lab["status"] == "passed", (lab.get("reason"), done.stdout[-3000:])
    assert lab["notebook"]["cells_run"] == lab["notebook"]["cells"] > 0
    assert lab["checks"]["passed"] and lab["baseline_checks"]["passed"] and lab["repeat_checks"]["passed"]
    assert {c["hidden"] for c in lab["checks"]["calls"]} == {False, True}
    assert lab["differences"]["outside_tolerance_vs_baseline"] == []
    assert [p["device"] for p in lab["precision"]] == ["cpu", "meta"]
    assert lab["precision"][0]["tf32_in_effect"] is False
    assert done.returncode == 0, done.stdout[-3000:]
    table = (out / "gpu_check.md").read_text()
    assert f"| {CHEAP_LAB} | **passed** |" in table and "share of peak" in table
    print(f"dry run of {CHEAP_LAB} with the doctor: {seconds:.0f} s")


@pytest.mark.slow
def test_sigterm_leaves_a_report_that_says_where_it_stopped(device_python, tmp_path):
    python, env = device_python
    out = tmp_path / "out"
    process = subprocess.Popen([python, str(HERE / "gpu_check.py"), "--out", str(out), "--no-doctor",
                                "--labs", "lab01_graphs"], cwd=REPO, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # until the lab's child has written its first phase
            try:
                lab = _report(out)["labs"].get("lab01_graphs", {})
            except (OSError, ValueError):
                lab = {}
            if lab.get("phases"):
                break
            time.sleep(0.5)
        else:
            pytest.fail("the lab never started")
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) == 128 + signal.SIGTERM
    finally:
        if process.poll() is None:
            process.kill()
    report = _report(out)
    assert report["stopped"] == "SIGTERM during lab01_graphs" and not report["complete"]
    assert report["labs"]["lab01_graphs"]["status"] == "stopped"
    assert "STOPPED (SIGTERM during lab01_graphs)" in (out / "gpu_check.md").read_text()


@pytest.mark.slow
def test_a_lab_out_of_time_is_stopped_and_the_next_one_still_runs(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, str(HERE / "gpu_check.py"), "--out", str(out), "--no-doctor",
                           "--labs", "lab01_graphs,lab09_performance", "--lab-budget", "2"],
                          cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1
    labs = _report(out)["labs"]
    assert [lab["status"] for lab in labs.values()] == ["timeout", "timeout"], labs
    assert "stopped at its 2 s budget" in labs["lab09_performance"]["reason"]
